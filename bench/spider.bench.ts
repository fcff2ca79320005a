// Schema linking on data nobody here wrote: all 166 Spider 1.0 schemas (876 tables) in one PostgreSQL database,
// each of the 1,034 dev questions asked against the whole. Prints recall@5 and recall@15 (share of the gold
// SQL's tables among the first 5/15 context entries, averaged over questions), the share of questions with
// every needed table in the top 15, and context tokens. A family entry counts for each of its members.
import pg from 'pg';
import { buildSchemaContext, rankedEntries } from '../src/core/ask/schemaContext';
import { compactSchemaList } from '../src/core/ask/schemaLinking';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { loadSpider, readSpider, SPIDER_DIR, spiderAvailable } from './spiderData';
import { percentile, report } from './stats';

const BUDGET = 6000;

async function main(): Promise<void> {
  if (!spiderAvailable()) {
    console.log(`Spider data not found in ${SPIDER_DIR}: skipped (see the README there for what it needs)`);
    return;
  }
  const data = readSpider();
  const scratch = await createScratchDatabase('pgagent_spider');
  const setup = new pg.Client({ connectionString: scratch.url });
  await setup.connect();
  try {
    const loaded = await loadSpider(setup, data.schemas);
    await setup.query('ANALYZE');
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    const snapshot = await db.withSession((s) => introspectSchema(s));
    await db.close();
    report(
      'Spider all-in-one',
      `${data.schemas.length} schemas, ${loaded.tables} tables, ${loaded.fks} of ${loaded.fksDeclared} declared FKs, ${data.cases.length} questions, budget ${BUDGET}`,
    );

    let r5 = 0;
    let r15 = 0;
    let all15 = 0;
    let all5 = 0;
    let allListed = 0;
    let listed = 0;
    const tokens: number[] = [];
    const times: number[] = [];
    for (const c of data.cases) {
      const start = performance.now();
      const context = buildSchemaContext(snapshot, c.question, { budgetTokens: BUDGET });
      times.push(performance.now() - start);
      tokens.push(context.tokens);
      const ranked = context.tables.map((t) => [
        `${t.schema}.${t.name}`,
        ...(t.members ?? []).map((m) => `${t.schema}.${m}`),
      ]);
      const found = (k: number) => {
        const top = new Set(ranked.slice(0, k).flat());
        return c.gold.filter((g) => top.has(g)).length;
      };
      const n = c.gold.length || 1;
      r5 += found(5) / n;
      r15 += found(15) / n;
      if (found(15) === c.gold.length) all15++;
      if (found(5) === c.gold.length) all5++;
      // Stage one of two-stage linking: is every needed table in the compact list the model picks from?
      const list = compactSchemaList(snapshot, c.question, BUDGET);
      const names = new Set(
        rankedEntries(snapshot, c.question, true)
          .slice(0, list.listed)
          .flatMap((e) => [e.key, ...(e.members ?? []).map((m) => `${e.table.schema}.${m}`)]),
      );
      listed += list.listed;
      if (c.gold.every((g) => names.has(g))) allListed++;
    }
    const count = data.cases.length;
    report('recall@5', (100 * r5) / count, '%');
    report('recall@15', (100 * r15) / count, '%');
    report('all needed tables in the top 5', (100 * all5) / count, '%');
    report('all needed tables in the top 15', (100 * all15) / count, '%');
    report(
      'two-stage: tables in the compact list (mean)',
      listed / count,
      `of ${rankedEntries(snapshot, '', true).length} entries`,
    );
    report('two-stage: all needed tables in the compact list', (100 * allListed) / count, '%');
    report('context tokens: mean', tokens.reduce((a, b) => a + b, 0) / count, 'tokens');
    report('context tokens: p95', percentile(tokens, 95), 'tokens');
    report(
      'whole schema (schemaTokens)',
      buildSchemaContext(snapshot, 'x', { budgetTokens: BUDGET }).schemaTokens,
      'tokens',
    );
    report('ranking time per question: p50', percentile(times, 50), 'ms');
    report('ranking time per question: p95', percentile(times, 95), 'ms');
  } finally {
    await setup.end();
    await scratch.drop();
  }
}

void main();

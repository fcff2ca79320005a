// Schema linking on the 2,000-table synthetic database (real PostgreSQL, ANALYZEd, so value words come from
// pg_stats): a music store shaped like the public Chinook sample hidden among near-miss tables (nine
// support-ticket copies, fifteen purchase-order shards, a partitioned log, ~1,950 generic tables, no FKs
// between them). The questions are ours (a development set, not a held-out one). Prints recall@5, recall@15,
// all needed tables in the top 15, and context tokens.
import pg from 'pg';
import { buildSchemaContext } from '../src/core/ask/schemaContext';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { MUSIC_STORE_QUESTIONS, musicStoreSql } from '../test/fixtures/musicStoreSchema';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { report } from './stats';

const BUDGET = 6000;
const NOISE = 1950;

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_linking');
  const setup = new pg.Client({ connectionString: scratch.url });
  await setup.connect();
  try {
    await setup.query(musicStoreSql(NOISE));
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    const snapshot = await db.withSession((s) => introspectSchema(s));
    await db.close();
    report(
      'music store among look-alikes',
      `${snapshot.tables.length} tables, ${MUSIC_STORE_QUESTIONS.length} questions, budget ${BUDGET}`,
    );
    let r5 = 0;
    let r15 = 0;
    let all15 = 0;
    let tokens = 0;
    for (const { question, needs } of MUSIC_STORE_QUESTIONS) {
      const context = buildSchemaContext(snapshot, question, { budgetTokens: BUDGET });
      const ranked = context.tables.map((t) => [t.name, ...(t.members ?? [])]);
      const found = (k: number) => needs.filter((n) => ranked.slice(0, k).flat().includes(n)).length;
      r5 += found(5) / needs.length;
      r15 += found(15) / needs.length;
      if (found(15) === needs.length) all15++;
      tokens += context.tokens;
      const missing = needs.filter((n) => !ranked.slice(0, 15).flat().includes(n));
      report(`  "${question}"`, missing.length === 0 ? 'all in the top 15' : `missing ${missing.join(', ')}`);
    }
    const n = MUSIC_STORE_QUESTIONS.length;
    report('recall@5', (100 * r5) / n, '%');
    report('recall@15', (100 * r15) / n, '%');
    report('all needed tables in the top 15', `${all15} of ${n}`);
    report('context tokens: mean', tokens / n, 'tokens');
  } finally {
    await setup.end();
    await scratch.drop();
  }
}

void main();

// Reach analysis (SPEC §7: < 5 ms added to a classification once cached) on a generated schema with 2,000
// tables, 500 functions (SQL and PL/pgSQL, some calling others) and 200 triggers: the code version query alone,
// the catalog load, the first reachOf (cold) and 200 varied statements once cached (warm).
import pg from 'pg';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { loadParser, parseSql } from '../src/core/sql/parse';
import { loadCodeCatalog } from '../src/core/sql/reach/codeCatalog';
import { codeVersion } from '../src/core/sql/reach/codeVersion';
import { forgetReach, reachOf } from '../src/core/sql/reach/reachOf';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { loadSpider, readSpider, SPIDER_DIR, spiderAvailable } from './spiderData';
import { percentile, report, timeRuns } from './stats';

const TABLES = 2000;
const FUNCTIONS = 500;
const TRIGGERS = 200;

function schemaSql(): string[] {
  const batches: string[] = [];
  for (let t = 0; t < TABLES; t += 200) {
    const ddl: string[] = [];
    for (let i = t; i < t + 200; i++) {
      const ref = i % 4 === 1 ? `, parent_id int REFERENCES t${i - 1}(id) ON DELETE CASCADE` : ', parent_id int';
      ddl.push(
        `CREATE TABLE t${i} (id serial PRIMARY KEY${ref}, name text, amount numeric(10,2) DEFAULT 0, created timestamptz DEFAULT now());`,
      );
      if (i % 10 === 0) ddl.push(`CREATE VIEW v${i} AS SELECT id, lower(name) AS name FROM t${i};`);
    }
    batches.push(ddl.join('\n'));
  }
  const fns: string[] = [];
  for (let f = 0; f < FUNCTIONS; f++) {
    // Every third calls an earlier one, so bodies reach other bodies.
    const call = f > 0 && f % 3 === 0 ? `f${f - 1}(x) + ` : '';
    fns.push(
      f % 2 === 0
        ? `CREATE FUNCTION f${f}(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT ${call}x * ${f}';`
        : `CREATE FUNCTION f${f}(x int) RETURNS int LANGUAGE plpgsql AS $$ DECLARE y int; BEGIN y := ${call}x + ${f}; IF y > 10 THEN RETURN y; END IF; SELECT count(*) INTO y FROM t${f}; RETURN y; END $$;`,
    );
  }
  batches.push(fns.join('\n'));
  const trg: string[] = [
    'CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.created := now(); RETURN NEW; END $$;',
    'CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM f1(1); RETURN NULL; END $$;',
  ];
  for (let i = 0; i < TRIGGERS; i++) {
    trg.push(
      i % 2 === 0
        ? `CREATE TRIGGER touch_${i} BEFORE INSERT OR UPDATE ON t${i * 10} FOR EACH ROW EXECUTE FUNCTION touch();`
        : `CREATE TRIGGER audit_${i} AFTER DELETE ON t${i * 10} FOR EACH STATEMENT EXECUTE FUNCTION audit();`,
    );
  }
  batches.push(trg.join('\n'));
  return batches;
}

function statement(i: number): string {
  const t = (i * 37) % TABLES;
  const f = (i * 13) % FUNCTIONS;
  switch (i % 5) {
    case 0:
      return `SELECT f${f}(id), name FROM t${t} WHERE amount > ${i}`;
    case 1:
      return `DELETE FROM t${t - (t % 10)} WHERE id = ${i}`;
    case 2:
      return `UPDATE t${t} SET amount = amount + 1 WHERE id = ${i}`;
    case 3:
      return `SELECT * FROM v${t - (t % 10)} JOIN t${t} USING (id) WHERE t${t}.id < ${i}`;
    default:
      return `INSERT INTO t${t} (name) VALUES ('n${i}')`;
  }
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench');
  const setup = new pg.Client({ connectionString: scratch.url });
  await setup.connect();
  try {
    const buildStart = performance.now();
    for (const batch of schemaSql()) await setup.query(batch);
    report('schema built (2,000 tables, 200 views, 500 functions, 200 triggers)', performance.now() - buildStart, 'ms');
    await loadParser();
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    const parsed = Array.from({ length: 200 }, (_, i) => parseSql(statement(i)).statements);

    const versions = await timeRuns(100, () => codeVersion(db));
    report('code version query alone, p50 of 100', percentile(versions, 50), 'ms');
    report('code version query alone, p95 of 100', percentile(versions, 95), 'ms');
    const loads = await timeRuns(5, () => loadCodeCatalog(db));
    report('code catalog load (one query), p50 of 5', percentile(loads, 50), 'ms');

    const colds = await timeRuns(5, async () => {
      forgetReach(db);
      await reachOf(db, parsed[0] ?? []);
    });
    report('cold reachOf (version + catalog + judging), p50 of 5', percentile(colds, 50), 'ms');

    let held = 0;
    let i = 0;
    const warm = await timeRuns(200, async () => {
      const [r] = await reachOf(db, parsed[i++ % parsed.length] ?? []);
      if ((r?.effects.length ?? 0) > 0 && r?.effects.some((e) => e.kind !== 'sequence')) held++;
    });
    report('warm reachOf, 200 distinct statements, p50', percentile(warm, 50), 'ms');
    report('warm reachOf, 200 distinct statements, p95', percentile(warm, 95), 'ms');
    report('statements with an effect other than a sequence (expect 0)', held);
    const again = await timeRuns(200, async () => {
      await reachOf(db, parsed[i++ % parsed.length] ?? []);
    });
    report('warm reachOf, statements seen before, p50', percentile(again, 50), 'ms');
    await db.close();
  } finally {
    await setup.end().catch(() => undefined);
    await scratch.drop();
  }
}

/** False holds on Spider: every dev question's gold SQL (a read) against all 166 schemas in one database. */
async function spider(): Promise<void> {
  if (!spiderAvailable()) {
    console.log(`Spider data not found in ${SPIDER_DIR}: false-hold count skipped`);
    return;
  }
  const data = readSpider();
  const questions = JSON.parse(readFileSync(join(SPIDER_DIR, 'dev.json'), 'utf8')) as { query: string }[];
  const scratch = await createScratchDatabase('pgagent_bench');
  const setup = new pg.Client({ connectionString: scratch.url });
  await setup.connect();
  try {
    const loaded = await loadSpider(setup, data.schemas);
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    let parsed = 0;
    let unparsable = 0;
    const held: string[] = [];
    for (const { query } of questions) {
      let statements;
      try {
        statements = parseSql(query).statements;
      } catch {
        unparsable++; // SQLite spellings PostgreSQL's grammar refuses: not a read we could run anyway.
        continue;
      }
      parsed++;
      const reaches = await reachOf(db, statements);
      if (reaches.some((r) => r.effects.length > 0)) held.push(query);
    }
    report('Spider schemas', `${data.schemas.length} schemas, ${loaded.tables} tables`);
    report(
      "Spider gold reads checked (parsed by PostgreSQL's grammar)",
      `${parsed} of ${questions.length} (${unparsable} unparsable)`,
    );
    report('Spider gold reads with a reach effect (false holds)', held.length);
    for (const query of held.slice(0, 5)) console.log(`  held: ${query}`);
    await db.close();
  } finally {
    await setup.end().catch(() => undefined);
    await scratch.drop();
  }
}

void main().then(spider);

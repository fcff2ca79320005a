// DBA tools (issue 26) on the DBA cluster (.ci/dba-cluster.sh, DBA_DATABASE_URL): `health` on a 2,000-table
// database (time and catalog reads issued), and `indexes advise` on 20 queries measured with hypopg.
import pg from 'pg';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { runHealth } from '../src/core/dba/runHealth';
import { adviseIndexes } from '../src/core/dba/indexAdvice/adviseIndexes';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { percentile, report, timeRuns } from './stats';

const DBA_URL = process.env.DBA_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5440/postgres';
const TABLES = 2000;

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench_dba', DBA_URL);
  const setup = new pg.Client({ connectionString: scratch.url });
  await setup.connect();
  try {
    for (let t = 0; t < TABLES; t += 100) {
      const ddl: string[] = [];
      for (let i = t; i < t + 100; i++) {
        // Every table: a FK without an index, a duplicate index pair on every 10th, a few rows for statistics.
        const ref = i > 0 ? `, parent_id int REFERENCES t${i - 1}(id)` : ', parent_id int';
        ddl.push(
          `CREATE TABLE t${i} (id int PRIMARY KEY${ref}, kind text, amount numeric(10,2), created_at timestamptz, note text);` +
            (i % 10 === 0
              ? `CREATE INDEX t${i}_kind_a ON t${i} (kind); CREATE INDEX t${i}_kind_b ON t${i} (kind);`
              : '') +
            `INSERT INTO t${i} (id, kind, amount, created_at, note) SELECT g, 'k' || (g % 4), g, now() - g * interval '1 hour', 'n' || g FROM generate_series(1, ${i < 20 ? 20000 : 20}) g;`,
        );
      }
      await setup.query(ddl.join('\n'));
    }
    await setup.query('ANALYZE');
    await setup.query('CREATE EXTENSION hypopg');
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    try {
      const first = await runHealth(db);
      report(
        'health: schema',
        `${TABLES} tables, ${first.checks.reduce((n, c) => n + c.findings.length, 0)} findings, ${first.queries} catalog reads (one READ ONLY transaction each)`,
      );
      const runs = await timeRuns(5, () => runHealth(db));
      report('health, 14 checks, p50 of 5', percentile(runs, 50), 'ms');
      report('health, 14 checks, max of 5', Math.max(...runs), 'ms');
      const slowest = [...first.checks].sort((a, b) => b.elapsedMs - a.elapsedMs).slice(0, 3);
      report('health: slowest checks (first run)', slowest.map((c) => `${c.id} ${c.elapsedMs} ms`).join(', '));

      // 20 queries on the 20 big tables: an equality, a range and a sort each, so each has candidates to measure.
      const queries = Array.from({ length: 20 }, (_, i) => ({
        sql: `SELECT id, amount FROM t${i} WHERE kind = 'k1' AND created_at > now() - interval '1 day' ORDER BY created_at`,
        calls: 10 + i,
        source: 'given' as const,
      }));
      const advice = await adviseIndexes(db, queries, { maxIndexes: 20 });
      report(
        'advise: 20 queries',
        `${advice.candidates} candidates, ${advice.recommendations.length} recommended, ${advice.explains} EXPLAINs, measured=${advice.measured}`,
      );
      const adviseRuns = await timeRuns(3, () => adviseIndexes(db, queries, { maxIndexes: 20 }));
      report('advise on 20 queries with hypopg, p50 of 3', percentile(adviseRuns, 50), 'ms');
      const q0 = advice.queries[0];
      report('advise: query 1 planner cost', `${q0?.costBefore} → ${q0?.costAfter}`);
    } finally {
      await db.close();
    }
  } finally {
    await setup.end();
    await scratch.drop();
  }
}

/** The DBA cluster answers, or the bench is skipped with a loud line (under CI=true, where .ci/run starts it: fails). */
async function clusterAnswers(): Promise<boolean> {
  const probe = new pg.Client({ connectionString: DBA_URL, connectionTimeoutMillis: 3000 });
  try {
    await probe.connect();
    return true;
  } catch (error) {
    const line = `dba: SKIPPED, the DBA cluster at ${DBA_URL} does not answer (${error instanceof Error ? error.message : String(error)}); start it with .ci/dba-cluster.sh`;
    if (process.env.CI === 'true') throw new Error(`CI=true and ${line}`, { cause: error });
    process.stdout.write(`${line}\n`);
    return false;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

void clusterAnswers().then((answers) => (answers ? main() : undefined));

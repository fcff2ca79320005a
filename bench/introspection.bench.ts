// Schema intelligence on a generated 2,000-table / 40,000-column schema (SPEC §7): our catalog queries
// vs the naive per-table information_schema approach, and cache hits (memory/file and Redis).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { introspectSchema } from '../src/core/db/introspect';
import { openPostgres } from '../src/core/db/postgresDb';
import { SchemaCache } from '../src/core/db/schemaCache';
import { silentLogger } from '../src/core/platform/logger';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { percentile, report, timeRuns } from './stats';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TABLES = 2000;
const COLUMNS = 20;

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench');
  const setup = new pg.Client({ connectionString: scratch.url });
  await setup.connect();
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-bench-'));
  try {
    const cols = Array.from(
      { length: COLUMNS - 2 },
      (_, i) => `c${i} ${i % 3 === 0 ? 'text' : i % 3 === 1 ? 'numeric(10,2)' : 'timestamptz'}`,
    ).join(', ');
    for (let t = 0; t < TABLES; t += 100) {
      const ddl: string[] = [];
      for (let i = t; i < t + 100; i++) {
        const ref = i > 0 ? `, parent_id int REFERENCES t${i - 1}(id) ON DELETE CASCADE` : ', parent_id int';
        // A few rows each, so that ANALYZE gives pg_stats rows (value words) as on a real database.
        ddl.push(
          `CREATE TABLE t${i} (id int PRIMARY KEY${ref}, ${cols}); COMMENT ON TABLE t${i} IS 'table ${i}'; CREATE INDEX ON t${i} (c0);` +
            `INSERT INTO t${i} (id, c0, c3) SELECT g, 'kind ' || (g % 4), 'note ' || g FROM generate_series(1, 20) g;`,
        );
      }
      await setup.query(ddl.join('\n'));
    }
    await setup.query('ANALYZE');
    const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    const snapshot = await db.withSession((s) => introspectSchema(s));
    report(
      'schema size',
      `${snapshot.tables.length} tables, ${snapshot.tables.reduce((n, x) => n + x.columns.length, 0)} columns`,
    );

    const ours = await timeRuns(5, () => db.withSession((s) => introspectSchema(s)));
    report('introspection (fixed set of catalog queries), p50 of 5', percentile(ours, 50), 'ms');
    const withoutValues = await timeRuns(5, () => db.withSession((s) => introspectSchema(s, { valueWords: false })));
    report(
      '  of which value words from pg_stats (p50 difference)',
      percentile(ours, 50) - percentile(withoutValues, 50),
      'ms',
    );

    // The naive way: per table, its columns and its constraints from information_schema.
    const naiveOnce = async () => {
      const tables = await setup.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
      );
      for (const { table_name } of tables.rows) {
        await setup.query(
          `SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
          [table_name],
        );
        await setup.query(
          `SELECT tc.constraint_name, tc.constraint_type, kcu.column_name FROM information_schema.table_constraints tc
           JOIN information_schema.key_column_usage kcu USING (constraint_schema, constraint_name) WHERE tc.table_schema = 'public' AND tc.table_name = $1`,
          [table_name],
        );
      }
    };
    const naiveStart = performance.now();
    await naiveOnce();
    const naive = performance.now() - naiveStart;
    report('naive per-table information_schema (1 run)', naive, 'ms');
    report('speed-up', `${(naive / percentile(ours, 50)).toFixed(1)}x`);

    const fileCache = new SchemaCache({ dir, logger: silentLogger });
    await fileCache.get(db, 'bench');
    const memoryHits = await timeRuns(50, () => fileCache.get(db, 'bench'));
    report('freshness check + hit, memory, p50 of 50', percentile(memoryHits, 50), 'ms');
    report('freshness check + hit, memory, p95 of 50', percentile(memoryHits, 95), 'ms');
    const fromFile = await timeRuns(5, () => new SchemaCache({ dir, logger: silentLogger }).get(db, 'bench'));
    report('cache hit, file, fresh instance (counters stored with it), p50 of 5', percentile(fromFile, 50), 'ms');

    const redis = new Redis(REDIS_URL, { lazyConnect: true });
    try {
      await redis.connect();
      const prefix = `pgagent-bench-${randomBytes(3).toString('hex')}:`;
      await new SchemaCache({ redis, prefix, logger: silentLogger }).get(db, 'bench');
      const redisHits = await timeRuns(10, () =>
        new SchemaCache({ redis, prefix, logger: silentLogger }).get(db, 'bench'),
      );
      report('cache hit, Redis, fresh instance (counters stored with it), p50 of 10', percentile(redisHits, 50), 'ms');
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    } catch (error) {
      report('cache hit, Redis', `skipped: ${String(error)}`);
    } finally {
      redis.disconnect();
    }
    const { catalogActivity, schemaVersion } = await import('../src/core/db/schemaVersion');
    const activityOnly = await timeRuns(50, () => db.withSession((s) => catalogActivity(s)));
    report('freshness signal alone (catalog activity counters), p50 of 50', percentile(activityOnly, 50), 'ms');
    const versionOnly = await timeRuns(20, () => db.withSession((s) => schemaVersion(s)));
    report('full schema version check alone (only when counters move), p50 of 20', percentile(versionOnly, 50), 'ms');
    await setup.query('ALTER TABLE t5 ADD COLUMN extra text');
    await setup.end();
    const start = performance.now();
    const afterDdl = await fileCache.get(db, 'bench');
    report(
      'after DDL from another session: re-introspected',
      `${afterDdl.source} in ${(performance.now() - start).toFixed(0)} ms`,
    );
    await db.close();
  } finally {
    await setup.end().catch(() => undefined);
    await scratch.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();

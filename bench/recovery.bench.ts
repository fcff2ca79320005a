// Issue 25: what the safety of approved DDL costs. (1) The way back: an approved TRUNCATE and DROP COLUMN with
// the recovery copy vs without (recovery off), per MB of table; DROP TABLE's move. (2) The lock check before
// approved DDL (pg_locks + pg_stat_activity, then LOCK TABLE in a short try) with many other sessions holding
// locks, vs none. Prints numbers; asserts nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import pg from 'pg';
import { FileTicketStore } from '../src/core/approvals/fileTicketStore';
import { parseConnectionUrl } from '../src/core/db/connectionTarget';
import { openPostgres } from '../src/core/db/postgresDb';
import { silentLogger } from '../src/core/platform/logger';
import { classifySql } from '../src/core/sql/classify';
import { lockTargetsOf, takeLocksBriefly } from '../src/core/sql/ddl/lockWait';
import { sessionsInTheWay } from '../src/core/sql/ddl/lockHolders';
import { executeApproved } from '../src/core/sql/executeApproved';
import { planRecovery } from '../src/core/sql/recovery/recoveryPlan';
import { recoveryInForce } from '../src/core/sql/recovery/recoveryInForce';
import { loadParser } from '../src/core/sql/parse';
import { runSql } from '../src/core/sql/runSql';
import type { SafetySettings } from '../src/core/sql/safetySettings';
import { DEFAULT_RECOVERY, DEFAULT_SAFETY } from '../src/core/sql/safetySettings';
import { workspaceUndoSink } from '../src/core/sql/writeArtifacts';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { mib, percentile, report, timeRuns } from './stats';

const SIZES_MB = [8, 32];
/** max_connections is 100 on the machines this runs on, shared with others: as many as fit with room to spare. */
const OTHER_SESSIONS = Number(process.env.BENCH_SESSIONS ?? 60);

async function main(): Promise<void> {
  await loadParser();
  const scratch = await createScratchDatabase('pgagent_bench');
  const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  const store = new FileTicketStore(mkdtempSync(join(tmpdir(), 'pgagent-bench-recovery-')), { logger: silentLogger });
  const clients: Client[] = [];
  try {
    const run = async (sql: string, settings: SafetySettings) => {
      const outcome = await runSql(db, store, { sql, connection: 'c', requestedBy: 'bench', settings });
      if (outcome.status !== 'held') throw new Error(`expected held, got ${outcome.status}`);
      await store.decide(outcome.ticket.id, { approve: true, by: 'bench' });
      const started = performance.now();
      await executeApproved(db, store, outcome.ticket.id, {
        ...settings,
        connection: 'c',
        by: 'bench',
        undo: workspaceUndoSink(mkdtempSync(join(tmpdir(), 'pgagent-bench-undo-')), outcome.ticket.id),
        logger: silentLogger,
      });
      return performance.now() - started;
    };
    const on: SafetySettings = { ...DEFAULT_SAFETY, recovery: { ...DEFAULT_RECOVERY, maxCopyBytes: 1024 ** 3 } };
    const off: SafetySettings = { ...DEFAULT_SAFETY, recovery: { ...DEFAULT_RECOVERY, enabled: false } };
    const fill = async (table: string, megabytes: number) => {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
      await db.query(`CREATE TABLE ${table} (id int PRIMARY KEY, a int, payload text)`);
      // ~250 bytes a row on disk.
      await db.query(
        `INSERT INTO ${table} SELECT g, g, md5(g::text) || repeat('x', 180) FROM generate_series(1, ${Math.round((megabytes * 1024 * 1024) / 250)}) g`,
      );
      await db.query(`ANALYZE ${table}`);
      return Number((await db.query<{ b: string }>(`SELECT pg_table_size('${table}')::text AS b`)).rows[0]?.b);
    };

    // Warm-up: the first quarantine creates its schema and entries table; parser and plans warm up too.
    await fill('warm', 1);
    await run('TRUNCATE warm', on);
    await run('TRUNCATE warm', off);
    await run('DROP TABLE warm', on);
    console.log('\n-- the way back: execution time of the approved statement, recovery copy on vs off');
    for (const size of SIZES_MB) {
      const bytes = await fill('t_on', size);
      const copied = await run('TRUNCATE t_on', on);
      await fill('t_off', size);
      const plain = await run('TRUNCATE t_off', off);
      report(
        `TRUNCATE ${mib(bytes).toFixed(0)} MB: with copy / without`,
        `${copied.toFixed(0)} / ${plain.toFixed(0)}`,
        'ms',
      );
      report(`  copy cost per MB (TRUNCATE)`, (copied - plain) / mib(bytes), 'ms/MB');
      await fill('c_on', size);
      const column = await run('ALTER TABLE c_on DROP COLUMN payload', on);
      await fill('c_off', size);
      const columnPlain = await run('ALTER TABLE c_off DROP COLUMN payload', off);
      report(
        `DROP COLUMN payload of ${mib(bytes).toFixed(0)} MB: with copy / without`,
        `${column.toFixed(0)} / ${columnPlain.toFixed(0)}`,
        'ms',
      );
      await fill('d_on', size);
      const moved = await run('DROP TABLE d_on', on);
      await fill('d_off', size);
      const dropped = await run('DROP TABLE d_off', off);
      report(
        `DROP TABLE ${mib(bytes).toFixed(0)} MB: moved to quarantine / dropped`,
        `${moved.toFixed(0)} / ${dropped.toFixed(0)}`,
        'ms',
      );
      await db.query(`DROP TABLE IF EXISTS t_on, t_off, c_on, c_off`);
    }

    console.log('\n-- what the way back adds to the impact of every destructive statement (p50 of 200, one session)');
    const own = DEFAULT_RECOVERY;
    const inForce = await db.withSession((session) => timeRuns(200, () => recoveryInForce(session, own)));
    report('recovery window in force (pinned policy read; none pinned here)', percentile(inForce, 50), 'ms');
    await db.query('CREATE TABLE planned (id int PRIMARY KEY, a int)');
    const truncate = classifySql('TRUNCATE planned').statements;
    const plan = await db.withSession((session) => timeRuns(200, () => planRecovery(session, truncate, own)));
    report('planRecovery of one TRUNCATE (window + relation facts)', percentile(plan, 50), 'ms');

    console.log(`\n-- the lock check before approved DDL (p50 of 40 runs, in a transaction rolled back each time)`);
    await db.query('CREATE TABLE target (id int PRIMARY KEY)');
    for (let i = 0; i < 5; i++) await db.query(`CREATE TABLE other_${i} (id int)`);
    const statements = classifySql('ALTER TABLE target ADD COLUMN x int').statements;
    const measure = async (label: string) => {
      const check = await db.withSession(async (session) => {
        const targets = await lockTargetsOf(session, statements);
        return timeRuns(40, () => sessionsInTheWay(session, targets));
      });
      const lock = await db.withSession(async (session) =>
        timeRuns(40, async () => {
          await session.query('BEGIN');
          await takeLocksBriefly(session, await lockTargetsOf(session, statements), { timeoutMs: 100, attempts: 10 });
          await session.query('ROLLBACK');
        }),
      );
      const locks = Number((await db.query<{ n: string }>('SELECT count(*)::text AS n FROM pg_locks')).rows[0]?.n);
      report(`${label} (${locks} rows in pg_locks): holders query`, percentile(check, 50), 'ms');
      report(`${label}: resolve targets + LOCK TABLE try`, percentile(lock, 50), 'ms');
    };
    await measure('no other sessions');
    for (let i = 0; i < OTHER_SESSIONS; i++) {
      const c = new pg.Client({ connectionString: scratch.url });
      await c.connect();
      clients.push(c);
      // Each holds ACCESS SHARE on five other tables, idle in transaction: rows in pg_locks, none in the way.
      await c.query('BEGIN');
      for (let t = 0; t < 5; t++) await c.query(`SELECT * FROM other_${t}`);
    }
    await measure(`${OTHER_SESSIONS} sessions idle in transaction`);
  } finally {
    for (const c of clients) await c.end().catch(() => undefined);
    await db.close();
    await scratch.drop();
  }
}

void main();

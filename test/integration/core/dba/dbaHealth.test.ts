// pg-agent health (issue 26) on the DBA cluster: a workload creates each finding for real and each is detected
// with its evidence and a fix; a non-superuser gets what it may read and notes for the rest, never a crash.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import type { HealthReport } from '../../../../src/core/dba/healthTypes';
import { runHealth } from '../../../../src/core/dba/runHealth';
import type { ScratchDatabase } from '../../../support/scratchDatabase';
import { execSql, queryValue } from '../../../support/scratchDatabase';
import { createDbaScratch, dbaClusterAvailable } from '../../../support/dbaCluster';
import { loadDbaWorkload } from '../../../support/dbaWorkload';

const findingsOf = (report: HealthReport, id: string) => report.checks.find((c) => c.id === id)?.findings ?? [];

describe.runIf(dbaClusterAvailable)('pg-agent health on a real workload', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let idle: pg.Client;
  let report: HealthReport;

  beforeAll(async () => {
    scratch = await createDbaScratch();
    await loadDbaWorkload(scratch.url);
    idle = new pg.Client({ connectionString: scratch.url, application_name: 'forgotten-tx' });
    await idle.connect();
    await idle.query('BEGIN');
    await idle.query('SELECT count(*) FROM orders');
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    report = await runHealth(db, {
      thresholds: { idleInTransactionSeconds: 0, wraparoundWarnAge: 0, connectionWarnRatio: 0, bloatMinBytes: 0 },
    });
  });
  afterAll(async () => {
    await idle?.end().catch(() => undefined);
    await db?.close();
    await scratch?.drop();
  });

  it('runs every check, read-only, and says how many reads it issued', () => {
    expect(report.checks).toHaveLength(14);
    expect(report.checks.filter((c) => c.status === 'error')).toEqual([]);
    // One for the server's facts, one per check, one more for replication slots (is this a standby?).
    expect(report.queries).toBe(16);
    expect(report.summary.findings).toBe(report.checks.filter((c) => c.findings.length > 0).length);
  });

  it('finds the INVALID index a failed concurrent build left, with its definition', async () => {
    const [finding] = findingsOf(report, 'invalid_indexes');
    expect(
      await queryValue(scratch.url, "SELECT indisvalid FROM pg_index WHERE indexrelid = 'tags_name_key'::regclass"),
    ).toBe(false);
    expect(finding?.object).toBe('index public.tags_name_key');
    expect(finding?.evidence.definition).toMatch(/CREATE UNIQUE INDEX tags_name_key ON public.tags/);
    expect(finding?.fixSql).toBe('DROP INDEX CONCURRENTLY public.tags_name_key');
  });

  it('finds the duplicate index and names the one that covers it', () => {
    const dup = findingsOf(report, 'duplicate_indexes');
    expect(dup.map((f) => [f.evidence.index, f.evidence.covered_by, f.evidence.exact])).toEqual([
      ['public.orders_status_copy_idx', 'public.orders_status_idx', true],
    ]);
    expect(dup[0]?.fixSql).toBe('DROP INDEX CONCURRENTLY public.orders_status_copy_idx');
  });

  it('finds the unused indexes, never a primary key', () => {
    const unused = findingsOf(report, 'unused_indexes').map((f) => f.evidence.index);
    expect(unused).toEqual(expect.arrayContaining(['public.orders_status_idx', 'public.orders_status_copy_idx']));
    expect(unused.some((i) => String(i).endsWith('_pkey'))).toBe(false);
    expect(findingsOf(report, 'unused_indexes').every((f) => f.evidence.idx_scan === 0)).toBe(true);
  });

  it('finds the table whose rows are mostly dead, with the counts', async () => {
    const events = findingsOf(report, 'table_bloat').find((f) => f.object === 'public.events');
    expect(events?.evidence.dead_tuples).toBe(
      Number(await queryValue(scratch.url, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'events'")),
    );
    expect(events?.evidence.dead_tuples).toBe(9000);
    expect(events?.evidence.live_tuples).toBe(1000);
    expect(events?.fixSql).toBe('VACUUM (ANALYZE) public.events');
    expect(findingsOf(report, 'table_bloat').some((f) => f.object === 'public.customers')).toBe(false);
  });

  it('finds the tables never vacuumed (autovacuum is off on this cluster)', () => {
    const stale = findingsOf(report, 'vacuum_analyze').map((f) => f.object);
    expect(stale).toEqual(expect.arrayContaining(['public.orders', 'public.events', 'public.customers']));
    expect(stale).not.toContain('public.tags');
  });

  it('finds the sequence near its maximum, with the numbers', () => {
    const [seq] = findingsOf(report, 'sequences_near_max');
    expect(seq?.object).toBe('sequence public.ticket_no');
    expect(seq?.severity).toBe('critical');
    expect(seq?.evidence).toMatchObject({ last_value: '95', limit: '100', used_ratio: 0.95 });
    expect(seq?.fixSql).toBe('ALTER SEQUENCE public.ticket_no AS bigint MAXVALUE 9223372036854775807');
  });

  it('finds the idle-in-transaction session by its pid, application and query', async () => {
    const pid = Number((await idle.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
    const finding = findingsOf(report, 'idle_in_transaction').find((f) => f.evidence.pid === pid);
    expect(finding?.evidence).toMatchObject({
      application: 'forgotten-tx',
      state: 'idle in transaction',
      query: 'SELECT count(*) FROM orders',
    });
    expect(finding?.fixSql).toBe(`SELECT pg_terminate_backend(${pid})`);
  });

  it('finds the foreign key without an index, and the index that fixes it', () => {
    const fk = findingsOf(report, 'missing_fk_indexes');
    expect(fk.map((f) => [f.object, f.evidence.columns, f.evidence.references])).toEqual([
      ['public.orders', 'customer_id', 'public.customers'],
    ]);
    expect(fk[0]?.fixSql).toBe('CREATE INDEX CONCURRENTLY ON public.orders (customer_id)');
  });

  it('reports wraparound distance and connection use with their evidence', async () => {
    const [xid] = findingsOf(report, 'xid_wraparound').filter((f) => f.object === `database ${scratch.name}`);
    expect(Number(xid?.evidence.remaining) + Number(xid?.evidence.xid_age)).toBe(2 ** 31 - 1);
    const [conn] = findingsOf(report, 'connection_saturation');
    expect(conn?.evidence.max_connections).toBe(Number(await queryValue(scratch.url, 'SHOW max_connections')));
    expect(Number(conn?.evidence.connections)).toBeGreaterThanOrEqual(2);
  });

  it('with default thresholds a healthy part of the database is quiet', async () => {
    const quiet = await runHealth(db, { only: ['idle_in_transaction', 'connection_saturation', 'replication_slots'] });
    expect(quiet.checks.map((c) => [c.id, c.status])).toEqual([
      ['idle_in_transaction', 'ok'],
      ['connection_saturation', 'ok'],
      ['replication_slots', 'ok'],
    ]);
  });

  it('a non-superuser role gets every check it may run and a clear note for the rest', async () => {
    const role = `dba_reader_${scratch.name.slice(-6)}`;
    await execSql(
      scratch.url,
      `CREATE ROLE ${role} LOGIN; GRANT CONNECT ON DATABASE ${scratch.name} TO ${role}; GRANT USAGE ON SCHEMA public TO ${role}`,
    );
    const url = new URL(scratch.url);
    url.username = role;
    const weak = await openPostgres(parseConnectionUrl(url.toString()), { logger: silentLogger });
    try {
      const limited = await runHealth(weak, { thresholds: { idleInTransactionSeconds: 0 } });
      expect(limited.checks.filter((c) => c.status === 'error')).toEqual([]);
      const sequences = limited.checks.find((c) => c.id === 'sequences_near_max');
      expect(sequences?.status).toBe('skipped');
      expect(sequences?.note).toMatch(/no USAGE or SELECT privilege/);
      // PostgreSQL hides other roles' session states from it: the check says so instead of reporting all clear.
      const idleCheck = limited.checks.find((c) => c.id === 'idle_in_transaction');
      expect(idleCheck?.findings).toEqual([]);
      expect(idleCheck?.note).toMatch(
        /^\d+ sessions of other roles are hidden from this role \(it needs pg_read_all_stats/,
      );
    } finally {
      await weak.close();
      await execSql(
        scratch.url,
        `REVOKE ALL ON SCHEMA public FROM ${role}; REVOKE CONNECT ON DATABASE ${scratch.name} FROM ${role}`,
      );
      await execSql(scratch.url, `DROP ROLE ${role}`).catch(() => undefined);
    }
  });
});

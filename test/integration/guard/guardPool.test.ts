/**
 * `pg-agent guard --pool transaction` with real clients (node-postgres, pgbench) and a real guard process:
 * settings stay each client's own on a pool of one session, prepared statements keep working on a session
 * that never saw their Parse, LISTEN and cursors WITH HOLD keep their session (and the others wait, then get a
 * clear error), and a held write is approved and run once through the pool, alone and in a transaction.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { execSql, queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, postgresAvailable } from '../../support/services';
import { connect } from '../../support/pgClients';
import { pgbench, pgbenchInit, pgbenchTarget } from '../../support/toolRun';

async function value(client: pg.Client, sql: string): Promise<unknown> {
  const result = await client.query<unknown[]>({ text: sql, rowMode: 'array' });
  return result.rows[0]?.[0];
}

/** Upstream sessions on the database that are not the core's own pool (`postgres-agent`) nor this test's query. */
async function upstreamSessions(db: ScratchDatabase): Promise<number> {
  return Number(
    await queryValue(
      db.url,
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> 'postgres-agent' AND pid <> pg_backend_pid()",
    ),
  );
}

describe.skipIf(!postgresAvailable)('pg-agent guard --pool transaction', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const clients: pg.Client[] = [];
  const open = async (application: string) => {
    const client = await connect(guard.url, application);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    db = await createScratchDatabase('i38p_pool');
    await execSql(db.url, 'CREATE TABLE i38p_items (id int PRIMARY KEY, note text)');
    guard = await startGuardProcess(db.url, {
      args: ['--pool', 'transaction', '--pool-size', '1', '--pool-timeout', '2'],
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await guard?.stop();
    await db?.drop();
  });

  it('refuses bad pool flags with exit 2 and a clear message', async () => {
    const bad = [
      [['--pool', 'bogus'], '--pool "bogus" is not session or transaction'],
      [['--pool', 'transaction', '--pool-size', '0'], '--pool-size "0" is not a whole number'],
      [['--pool', 'transaction', '--pool-timeout', 'soon'], '--pool-timeout "soon" is not a whole number'],
      [['--pool-size', '5'], '--pool-size and --pool-timeout apply to --pool transaction'],
    ] as const;
    for (const [flags, message] of bad) {
      const result = await guard.pgAgent(['guard', '--listen', '127.0.0.1:0', ...flags]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it('two clients on a pool of one session each see their own settings', async () => {
    const a = await open('i38p-a');
    const b = await open('i38p-b');
    await a.query("SET statement_timeout = '1234ms'");
    await a.query("SET TimeZone = 'Asia/Tokyo'");
    expect(await value(b, 'SHOW statement_timeout')).toBe('0');
    expect(await value(b, 'SHOW application_name')).toBe('i38p-b');
    expect(await value(a, 'SHOW statement_timeout')).toBe('1234ms');
    expect(await value(a, 'SHOW application_name')).toBe('i38p-a');
    await b.query("SET application_name = 'i38p-b2'");
    expect(await value(a, 'SHOW TimeZone')).toBe('Asia/Tokyo');
    expect(await value(b, 'SHOW TimeZone')).not.toBe('Asia/Tokyo');
    expect(await value(b, 'SHOW application_name')).toBe('i38p-b2');
    // SET LOCAL ends with its transaction; the session value stays.
    await a.query('BEGIN');
    await a.query("SET LOCAL statement_timeout = '99ms'");
    expect(await value(a, 'SHOW statement_timeout')).toBe('99ms');
    await a.query('COMMIT');
    expect(await value(b, 'SHOW statement_timeout')).toBe('0');
    expect(await value(a, 'SHOW statement_timeout')).toBe('1234ms');
    // The server's own view: one upstream session served both clients.
    expect(await upstreamSessions(db)).toBe(1);
    // A setting the guard does not let pass is refused in the pool as everywhere.
    await expect(a.query('SET search_path = public')).rejects.toMatchObject({ code: 'PA002' });
    await Promise.all([a.end(), b.end()]);
  });

  it('a prepared statement runs on a session that never saw its Parse (parsed again there)', async () => {
    const a = await open('i38p-prep');
    const pid = { name: 'i38p_pid', text: 'SELECT pg_backend_pid() AS pid, $1::int + 1 AS next', values: [1] };
    const first = await a.query<{ pid: number; next: number }>(pid);
    // Another client takes the pool's one session into its transaction, and a's next run waits for it. That
    // client then disconnects mid-transaction: its session is closed (never given to another client half-way)
    // and a gets a new one, where node-postgres sends only Bind and Execute for its prepared statement.
    const b = await open('i38p-hold');
    await b.query('BEGIN');
    expect(await value(b, 'SELECT pg_backend_pid()')).toBe(first.rows[0]!.pid);
    const later = a.query<{ pid: number; next: number }>({ ...pid, values: [41] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await b.end();
    const second = (await later).rows[0]!;
    expect(second.next).toBe(42);
    expect(second.pid).not.toBe(first.rows[0]!.pid);
    await a.end();
  });

  it('DEALLOCATE ALL behind a comment forgets the prepared statements, as PostgreSQL does (read from the parse, not by words)', async () => {
    // node-postgres sends only Bind and Execute for a statement it prepared: the server must no longer know it.
    const rerun = async (client: pg.Client) => {
      const prepared = { name: 'i38p_dealloc', text: 'SELECT 1 AS one' };
      await client.query(prepared);
      await client.query('/* the pool */ DEALLOCATE ALL');
      return client.query(prepared).then(
        () => 'ran',
        (error: { code?: string }) => error.code,
      );
    };
    // Direct, then through the pool; each ends, so the session counts of the tests below see only their own.
    const direct = await connect(db.url, 'i38p-dealloc-direct');
    expect(await rerun(direct)).toBe('26000');
    await direct.end();
    const pooled = await open('i38p-dealloc');
    expect(await rerun(pooled)).toBe('26000');
    await pooled.end();
  });

  it('pgbench -M prepared with more clients than sessions: every transaction succeeds', async () => {
    expect((await pgbenchInit(db.url)).code).toBe(0);
    for (const mode of ['prepared', 'extended']) {
      const bench = await pgbench(
        ['-S', '-n', '-M', mode, '-c', '4', '-j', '2', '-t', '100'],
        pgbenchTarget(guard.url),
      );
      expect(bench.stderr).not.toContain('error');
      expect(bench.stdout).toContain('number of transactions actually processed: 400/400');
    }
    expect(await upstreamSessions(db)).toBeLessThanOrEqual(1);
  }, 180_000);

  it('LISTEN keeps its session (notifications arrive); others wait and get a clear error; UNLISTEN frees it', async () => {
    const listener = await open('i38p-listen');
    const notices: string[] = [];
    const heard: string[] = [];
    listener.on('notice', (n) => notices.push(n.message ?? ''));
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query('LISTEN i38p_channel');
    await listener.query('SELECT 1');
    expect(notices.join('\n')).toContain('keeps this client on one upstream session of its pool while it holds LISTEN');
    await execSql(db.url, "NOTIFY i38p_channel, 'hello'");
    for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heard).toEqual(['hello']);
    const other = await open('i38p-other');
    const refused = await other.query('SELECT 1').then(
      () => undefined,
      (error: { code?: string; message: string }) => error,
    );
    expect(refused?.code).toBe('53300');
    expect(refused?.message).toContain('kept by clients holding LISTEN');
    expect(refused?.message).toContain('--pool session');
    await listener.query('UNLISTEN *');
    await listener.query('SELECT 1');
    const after = await open('i38p-after');
    expect(await value(after, 'SELECT 2')).toBe(2);
    await Promise.all([listener.end(), after.end()]);
  });

  it('a cursor WITH HOLD keeps its session until it is closed', async () => {
    const a = await open('i38p-cursor');
    await a.query('DECLARE i38p_c CURSOR WITH HOLD FOR SELECT generate_series(1, 5) AS n');
    expect((await a.query<{ n: number }>('FETCH 2 FROM i38p_c')).rows.map((r) => r.n)).toEqual([1, 2]);
    const b = await open('i38p-waits');
    await expect(b.query('SELECT 1')).rejects.toMatchObject({ code: '53300' });
    expect((await a.query<{ n: number }>('FETCH 2 FROM i38p_c')).rows.map((r) => r.n)).toEqual([3, 4]);
    await a.query('CLOSE i38p_c');
    await a.query('SELECT 1');
    const c = await open('i38p-next');
    expect(await value(c, 'SELECT 3')).toBe(3);
    await Promise.all([a.end(), c.end()]);
  });

  it('a held write and a held transaction are approved and run once through the pool', async () => {
    const a = await open('i38p-writer');
    const held = await a.query("INSERT INTO i38p_items VALUES (1, 'one')").then(
      () => undefined,
      (error: { code?: string; message: string }) => error,
    );
    expect(held?.code).toBe('PA001');
    const ticket = /tkt_[a-z0-9]+/.exec(held!.message)![0];
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM i38p_items'))).toBe(0);
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    // Another client's transaction in between: the retry lands on whatever session is free.
    const other = await open('i38p-between');
    expect(await value(other, 'SELECT count(*)::int FROM i38p_items')).toBe(0);
    await other.end();
    const ran = await a.query("INSERT INTO i38p_items VALUES (1, 'one')");
    expect(ran.rowCount).toBe(1);
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM i38p_items'))).toBe(1);

    const transaction = async () => {
      await a.query('BEGIN');
      await a.query("INSERT INTO i38p_items VALUES (2, 'two')");
      await a.query("UPDATE i38p_items SET note = 'uno' WHERE id = 1");
      return a.query('COMMIT').then(
        () => undefined,
        (error: { code?: string; message: string }) => error,
      );
    };
    const heldTx = await transaction();
    expect(heldTx?.code).toBe('PA001');
    const txTicket = /tkt_[a-z0-9]+/.exec(heldTx!.message)![0];
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM i38p_items'))).toBe(1);
    expect((await guard.pgAgent(['approvals', 'approve', txTicket])).code).toBe(0);
    expect(await transaction()).toBeUndefined();
    expect(await queryValue(db.url, "SELECT string_agg(id || ':' || note, ',' ORDER BY id) FROM i38p_items")).toBe(
      '1:uno,2:two',
    );
    await a.end();
  });
});

/**
 * What an attacker (or a careless agent) sends through `pg-agent guard` (issue 24's list): session
 * changes, side-effect functions in a SELECT (a COPY's query too), NOTIFY, COPY … PROGRAM and FROM STDIN,
 * DO blocks, a writable CTE, a transaction in one message, a write behind reads. Each is held (PA001) or refused (PA002), and the database shows
 * nothing changed: rows, sequence, settings of the client's own session.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { connect, failure } from '../../support/pgClients';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';

const ATTACKS: [sql: string, code: 'PA001' | 'PA002'][] = [
  ["SELECT set_config('search_path', 'evil', false)", 'PA001'],
  ['SET search_path = evil', 'PA002'],
  ['SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE', 'PA002'],
  ['SET default_transaction_read_only = off', 'PA002'],
  ['BEGIN READ WRITE', 'PA002'],
  ["COPY t TO PROGRAM 'touch /tmp/pgagent-guard-attack'", 'PA002'],
  ['DO $$ BEGIN DELETE FROM t; END $$', 'PA001'],
  ['WITH gone AS (DELETE FROM t RETURNING *) SELECT count(*) FROM gone', 'PA001'],
  ['BEGIN; DELETE FROM t; COMMIT', 'PA002'],
  ['SELECT 1; DELETE FROM t', 'PA001'],
  ["SELECT nextval('s')", 'PA001'],
  ['SELECT pg_advisory_lock(42)', 'PA001'],
  ['SELECT shout()', 'PA001'],
  ['NOTIFY anything', 'PA001'],
  ["SELECT pg_notify('anything', 'x')", 'PA001'],
  ['COPY (SELECT shout()) TO STDOUT', 'PA001'],
  ['COPY t FROM STDIN (FORMAT binary)', 'PA002'],
  ['PREPARE p AS DELETE FROM t', 'PA002'],
  ['DISCARD ALL', 'PA002'],
  // A cursor passes as the read it is; one over code that writes or takes a lock is held like that code.
  ['DECLARE c CURSOR WITH HOLD FOR SELECT shout()', 'PA001'],
  ['DECLARE c CURSOR WITH HOLD FOR SELECT pg_advisory_lock(42)', 'PA001'],
];

describe.skipIf(!postgresAvailable)('pg-agent guard against what an attacker sends', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let client: pg.Client;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_attack', [
      `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 3); CREATE SEQUENCE s;
       CREATE FUNCTION shout() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t; RETURN 1; END $$;`,
    ]));
    client = await connect(guard.url, 'guard-attacker');
  }, 60_000);

  afterAll(async () => {
    await client?.end().catch(() => undefined);
    await stopGuarded(guard, db);
  });

  it('locks no row with a cursor FOR UPDATE (held by the guard, or refused by the read-only session)', async () => {
    const error = await failure(client.query('DECLARE c CURSOR WITH HOLD FOR SELECT * FROM t FOR UPDATE'));
    expect(['PA001', 'PA002', '25006']).toContain(error?.code);
    expect(
      Number(
        await queryValue(
          db.url,
          "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = 'guard-attacker' AND (l.mode = 'RowShareLock' OR l.locktype IN ('tuple', 'transactionid'))",
        ),
      ),
    ).toBe(0);
    expect((await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_cursors')).rows).toEqual([{ n: 0 }]);
  });

  it.each(ATTACKS)('%s → %s, nothing changed', async (sql, code) => {
    const error = await failure(client.query(sql));
    expect(error?.code).toBe(code);
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM t'))).toBe(3);
    expect(await queryValue(db.url, 'SELECT last_value::int FROM s')).toBe(1);
    expect(await queryValue(db.url, 'SELECT is_called FROM s')).toBe(false);
    // The client's own session still reads, still read-only, with its search_path untouched.
    const session = await client.query<{ path: string; ro: string }>(
      "SELECT current_setting('search_path') AS path, current_setting('default_transaction_read_only') AS ro",
    );
    expect(session.rows[0]).toEqual({ path: '"$user", public', ro: 'on' });
    expect(
      Number(
        await queryValue(
          db.url,
          "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = 'guard-attacker' AND l.locktype = 'advisory'",
        ),
      ),
    ).toBe(0);
  });
});

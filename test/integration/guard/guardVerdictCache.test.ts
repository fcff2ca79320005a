/**
 * The guard remembers statements it let pass by a key with the numbers abstracted (src/guard/verdictCache.ts),
 * so that a read with a new literal is not judged again. Here the harmless form passes first; then a text
 * of the same template (a new literal) must be judged by the database's code as it is now: the function's
 * body changed in the database behind the guard's back. The harmful body takes an advisory lock, which a
 * read-only session may do: the database's pg_locks shows whether it ran. (Overloads picked by a literal's
 * type — int4, int8 after a minus sign, numeric, text — get different keys: test/unit/guardVerdictCache.test.ts;
 * the reach engine today judges every overload of a name, so they cannot pass apart here.)
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { connect } from '../../support/pgClients';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { execSql, postgresAvailable } from '../../support/services';

const LOCKING = 'LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(7); RETURN 2; END $$';

describe.skipIf(!postgresAvailable)("the guard's verdict cache against texts that share a template", () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let client: pg.Client;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_cache', [
      `CREATE FUNCTION k(int) RETURNS int LANGUAGE sql AS 'SELECT 1';
       CREATE FUNCTION m(int) RETURNS int LANGUAGE sql AS 'SELECT 1';`,
    ]));
    client = await connect(guard.url, 'guard-cache-attacker');
  }, 60_000);

  afterAll(async () => {
    await client?.end().catch(() => undefined);
    await stopGuarded(guard, db);
  });

  const advisoryLocks = async () =>
    Number(
      await queryValue(
        db.url,
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = 'guard-cache-attacker' AND l.locktype = 'advisory'",
      ),
    );

  const outcome = (sql: string) =>
    client.query<{ r: number }>(sql).then(
      (result) => result.rows[0]?.r,
      (error: pg.DatabaseError) => error.code,
    );

  it('a function changed in the database is judged by its new body once the version is checked again', async () => {
    expect(await outcome('SELECT k(1) AS r')).toBe(1);
    expect(await outcome('SELECT k(2) AS r')).toBe(1);
    await execSql(db.url, `CREATE OR REPLACE FUNCTION k(int) RETURNS int ${LOCKING}`);
    // Longer than the guard trusts a checked code version (judge.ts VERSION_MAX_AGE_MS).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await outcome('SELECT k(3) AS r')).toBe('PA001');
    expect(await outcome('SELECT k(1) AS r')).toBe('PA001');
    expect(await advisoryLocks()).toBe(0);
  });

  it('the same, for a text that is its own key (a string literal)', async () => {
    expect(await outcome("SELECT m(1) AS r, 'a' AS s")).toBe(1);
    await execSql(db.url, `CREATE OR REPLACE FUNCTION m(int) RETURNS int ${LOCKING}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await outcome("SELECT m(1) AS r, 'a' AS s")).toBe('PA001');
    expect(await advisoryLocks()).toBe(0);
  });
});

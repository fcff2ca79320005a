/**
 * `pg-agent guard` with psql (Debian's, a client nobody here wrote), as its own process in front of a
 * scratch database: reads return what the database returns; a write is held (SQLSTATE PA001, a ticket in
 * the store, nothing changed) until a person approves it, then the identical statement runs exactly once;
 * inside BEGIN a write rolls the transaction back at once; session changes are refused; Ctrl-C cancels.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded, tableOfRows } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { psqlRun, ticketIn } from '../../support/psqlRun';

describe.skipIf(!postgresAvailable)('pg-agent guard with psql', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_psql', [tableOfRows(5)]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  const count = async () => Number(await queryValue(db.url, 'SELECT count(*) FROM t'));

  it('returns what the database returns for reads, several statements in one message included', async () => {
    const through = await psqlRun(guard.url, ['SELECT id, v FROM t ORDER BY id; SELECT count(*) FROM t']);
    const direct = await psqlRun(db.url, ['SELECT id, v FROM t ORDER BY id; SELECT count(*) FROM t']);
    expect(through.stderr).toBe('');
    expect(through.stdout).toBe(direct.stdout);
    expect(through.stdout).toContain('3|v3');
  });

  it('holds a DELETE on a ticket, runs it once after approval, and never again', async () => {
    const held = await psqlRun(guard.url, ['DELETE FROM t WHERE id = 1']);
    expect(held.code).not.toBe(0);
    expect(held.stderr).toMatch(/ERROR: {2}PA001: held for approval: ticket tkt_\w+ \(risk LOW, 1 row\(s\)\)/);
    expect(held.stderr).toContain('public.t: 1 deleted');
    expect(held.stderr).toContain('pg-agent approvals approve');
    const ticket = ticketIn(held.stderr);
    expect(readdirSync(join(guard.workspace, '.pgagent', 'approvals'))).toContain(`${ticket}.json`);
    expect(await count()).toBe(5);

    // A retry before the decision waits on the same ticket.
    const again = await psqlRun(guard.url, ['DELETE FROM t WHERE id = 1']);
    expect(ticketIn(again.stderr)).toBe(ticket);
    expect(again.stderr).toContain('still waiting');

    const approved = await guard.pgAgent(['approvals', 'approve', ticket]);
    expect(approved.code).toBe(0);
    const ran = await psqlRun(guard.url, ['DELETE FROM t WHERE id = 1']);
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    expect(await count()).toBe(4);

    // The same text once more is a new write: a new ticket, nothing run.
    const later = await psqlRun(guard.url, ['DELETE FROM t WHERE id = 2']);
    expect(ticketIn(later.stderr)).not.toBe(ticket);
    expect(await count()).toBe(4);
  });

  it('holds a write hidden among reads in one message, and runs none of it', async () => {
    const run = await psqlRun(guard.url, ["SELECT 1; UPDATE t SET v = 'x'; SELECT 2"]);
    expect(run.stderr).toContain('PA001');
    expect(run.stdout).toBe('');
    expect(Number(await queryValue(db.url, "SELECT count(*) FROM t WHERE v = 'x'"))).toBe(0);
  });

  it('rolls a transaction back at its first write, holding no lock while anyone decides', async () => {
    const run = await psqlRun(guard.url, [
      'BEGIN',
      'SELECT count(*) FROM t',
      "UPDATE t SET v = 'y' WHERE id = 3",
      'SELECT 1',
      'COMMIT',
    ]);
    expect(run.stderr).toContain('PA002');
    expect(run.stderr).toContain('current transaction is aborted');
    expect(await queryValue(db.url, 'SELECT v FROM t WHERE id = 3')).toBe('v3');
    expect(
      Number(
        await queryValue(
          db.url,
          "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = 'guard-psql-test'",
        ),
      ),
    ).toBe(0);
  });

  it('refuses session changes and transactions that would write, and passes harmless settings', async () => {
    const search = await psqlRun(guard.url, ['SET search_path = evil']);
    expect(search.stderr).toContain('PA002');
    const readWrite = await psqlRun(guard.url, ['BEGIN READ WRITE']);
    expect(readWrite.stderr).toContain('PA002');
    const harmless = await psqlRun(guard.url, ["SET statement_timeout = '5s'; SHOW statement_timeout"]);
    expect(harmless).toMatchObject({ code: 0, stdout: '5s\n' });
    // JIT only decides whether a plan is compiled: the code catalog turns it off for its query through a guard too.
    const jit = await psqlRun(guard.url, ['SET jit = off; SHOW jit']);
    expect(jit).toMatchObject({ code: 0, stdout: 'off\n' });
  });

  it("passes the server's own errors with their fields, and answers syntax errors itself with the position", async () => {
    const division = await psqlRun(guard.url, ['SELECT 1/0']);
    expect(division.stderr).toContain('ERROR:  22012: division by zero');
    const syntax = await psqlRun(guard.url, ['SELEC 1']);
    expect(syntax.stderr).toMatch(/ERROR: {2}42601: syntax error at or near "SELEC"\nLINE 1: SELEC 1\n {8}\^/);
  });

  it('cancels a running read when psql gets Ctrl-C', async () => {
    const running = async () =>
      Number(
        await queryValue(
          db.url,
          "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query = 'SELECT pg_sleep(20)'",
        ),
      ) === 1;
    const run = await psqlRun(guard.url, ['SELECT pg_sleep(20)'], 'guard-psql-test', running);
    expect(run.stderr).toContain('57014');
  });

  it('turns away a wrong password and another database, and lists its clients', async () => {
    const wrong = new URL(guard.url);
    wrong.password = 'nope';
    expect((await psqlRun(wrong.toString(), ['SELECT 1'])).stderr).toContain('password authentication failed');
    const other = new URL(guard.url);
    other.pathname = '/postgres';
    expect((await psqlRun(other.toString(), ['SELECT 1'])).stderr).toContain('is not served by this guard');
    const status = await guard.pgAgent(['guard', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, pid: guard.child.pid });
  });
});

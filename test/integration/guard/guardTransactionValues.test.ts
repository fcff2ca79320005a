/**
 * "Exactly that, in every transaction": an approved transaction through `pg-agent guard` commits only the values
 * the person saw. psql (`psql -f`: BEGIN; / the write / COMMIT; as separate messages) and node-postgres (the
 * extended protocol, `$1` parameters) through a real guard process: a retry with another id or another SET value
 * is rolled back and held on a new ticket that says what differs; a value the server returned (RETURNING id)
 * passed on to a child insert varies on retry by provenance; a fresh UUID in a WHERE is held. Every outcome is
 * asserted on the rows in the database.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded, storedTicket } from '../../support/guardProcess';
import { transactionError } from '../../support/pgClients';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { execSql, postgresAvailable } from '../../support/services';
import { runPsql, ticketIn } from '../../support/psqlRun';
import type { PsqlRun } from '../../support/psqlRun';

/** `psql -f file`: each line its own message, as a new user's migration script would be sent. */
function psqlFile(url: string, lines: string[]): Promise<PsqlRun> {
  const dir = mkdtempSync(join(tmpdir(), 'i32_psql_'));
  const file = join(dir, 'tx.sql');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return runPsql(['-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', url, '-f', file], {
    application: 'i32-psql',
  });
}

describe.skipIf(!postgresAvailable)('pg-agent guard: a transaction approval binds its values', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const value = async (sql: string) => String(await queryValue(db.url, sql));
  const ticket = (id: string) => storedTicket(guard, id);
  const approve = async (id: string) => expect((await guard.pgAgent(['approvals', 'approve', id])).code).toBe(0);

  /** One transaction through the guard with node-postgres (extended protocol): its error, or undefined. */
  const pgTransaction = (steps: (client: pg.Client) => Promise<void>) => transactionError(guard.url, 'i32-pg', steps);

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('i32_guard_values', [
      `CREATE TABLE t (id int PRIMARY KEY, v int);
       INSERT INTO t SELECT g, g FROM generate_series(1, 10) g;
       CREATE TABLE parent (id serial PRIMARY KEY, name text);
       CREATE TABLE child (id serial PRIMARY KEY, parent_id int REFERENCES parent(id), note text);
       CREATE TABLE docs (id uuid PRIMARY KEY, body text, at timestamptz);`,
    ]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  it('psql: approved DELETE … WHERE id = 6 never lets id = 7 commit; the identical retry commits once', async () => {
    const held = await psqlFile(guard.url, ['BEGIN;', 'DELETE FROM t WHERE id = 6;', 'COMMIT;']);
    expect(held.stderr).toContain('PA001');
    const six = ticketIn(held.stderr);
    await approve(six);

    const other = await psqlFile(guard.url, ['BEGIN;', 'DELETE FROM t WHERE id = 7;', 'COMMIT;']);
    expect(other.stderr).toContain('PA001');
    const seven = ticketIn(other.stderr);
    expect(seven).not.toBe(six);
    expect(await value('SELECT count(*) FROM t WHERE id IN (6, 7)')).toBe('2');
    // The held-again card says what differs from the approved one; the approved ticket is still unspent.
    expect(ticket(seven).impact.warnings.join('\n')).toContain(
      `Differs from approved ticket ${six}: statement 1, value 1: approved 6 → now 7 (must be identical)`,
    );
    expect(ticket(six).status).toBe('APPROVED');

    const same = await psqlFile(guard.url, ['BEGIN;', 'DELETE FROM t WHERE id = 6;', 'COMMIT;']);
    expect(same.stderr).toBe('');
    expect(await value('SELECT count(*) FROM t WHERE id = 6')).toBe('0');
    expect(await value('SELECT count(*) FROM t WHERE id = 7')).toBe('1');
    expect(ticket(six).status).toBe('EXECUTED');
  });

  it('node-postgres ($1 parameters): approved SET v = 1 never lets SET v = 999999 commit', async () => {
    const update = (v: number) => async (c: pg.Client) => {
      await c.query('UPDATE t SET v = $1 WHERE id = $2', [v, 8]);
    };
    const held = await pgTransaction(update(1));
    expect(held).toContain('held for approval');
    const approved = ticketIn(held ?? '');
    await approve(approved);

    const bigger = await pgTransaction(update(999999));
    expect(bigger).toContain('held for approval');
    expect(ticketIn(bigger ?? '')).not.toBe(approved);
    expect(await value('SELECT v FROM t WHERE id = 8')).toBe('8');

    expect(await pgTransaction(update(1))).toBeUndefined();
    expect(await value('SELECT v FROM t WHERE id = 8')).toBe('1');
    expect(ticket(approved).status).toBe('EXECUTED');
  });

  it('an INSERT … RETURNING id and its children with that id commit on retry with new ids (provenance)', async () => {
    const family = async (c: pg.Client) => {
      const { rows } = await c.query<{ id: number }>('INSERT INTO parent (name) VALUES ($1) RETURNING id', ['ann']);
      const id = rows[0]!.id;
      await c.query('INSERT INTO child (parent_id, note) VALUES ($1, $2), ($1, $3)', [id, 'a', 'b']);
    };
    const held = await pgTransaction(family);
    expect(held).toContain('held for approval');
    const id = ticketIn(held ?? '');
    const card = ticket(id);
    expect(card.transaction?.statements[1]!.varies).toEqual([
      expect.objectContaining({ kind: 'returned', from: 0, column: 'id' }),
      expect.objectContaining({ kind: 'returned', from: 0, column: 'id' }),
    ]);
    expect(card.impact.warnings.join('\n')).toMatch(
      /Varies on retry: statement 2, value 1 \(1\): the value statement 1 returned \(id, row 1\)/,
    );
    await approve(id);

    expect(await pgTransaction(family)).toBeUndefined();
    // The measured run's id (1) is gone with its rollback: the retry's parent has a new id, its children point at it.
    expect(await value('SELECT count(*) FROM parent')).toBe('1');
    expect(await value('SELECT min(id) > 1 FROM parent')).toBe('true');
    expect(await value("SELECT string_agg(note, ',' ORDER BY note) FROM child JOIN parent p ON p.id = parent_id")).toBe(
      'a,b',
    );
    expect(ticket(id).status).toBe('EXECUTED');
  });

  it('a child pointing at another parent than the one its transaction returned is held', async () => {
    const existing = Number(await value('SELECT min(id) FROM parent'));
    const family = (other: boolean) => async (c: pg.Client) => {
      const { rows } = await c.query<{ id: number }>('INSERT INTO parent (name) VALUES ($1) RETURNING id', ['bob']);
      await c.query('INSERT INTO child (parent_id, note) VALUES ($1, $2)', [other ? existing : rows[0]!.id, 'c']);
    };
    const held = await pgTransaction(family(false));
    const id = ticketIn(held ?? '');
    await approve(id);
    const parents = await value('SELECT count(*) FROM parent');
    const wrong = await pgTransaction(family(true));
    expect(wrong).toContain('held for approval');
    expect(await value('SELECT count(*) FROM parent')).toBe(parents);
    expect(await value("SELECT count(*) FROM child WHERE note = 'c'")).toBe('0');
  });

  it('a fresh UUID and the current time vary on retry; a varying value in a WHERE is held', async () => {
    const insert = (uuid: string, at: Date) => async (c: pg.Client) => {
      await c.query('INSERT INTO docs (id, body, at) VALUES ($1, $2, $3)', [uuid, 'hello', at.toISOString()]);
    };
    const held = await pgTransaction(insert(crypto.randomUUID(), new Date()));
    const id = ticketIn(held ?? '');
    expect(ticket(id).transaction?.statements[0]!.varies?.map((v) => v.kind)).toEqual(['uuid', 'timestamp']);
    await approve(id);
    const uuid = crypto.randomUUID();
    expect(await pgTransaction(insert(uuid, new Date()))).toBeUndefined();
    expect(await value(`SELECT body FROM docs WHERE id = '${uuid}'`)).toBe('hello');

    // A UUID in a WHERE chooses rows: it must be identical.
    const remove = (doc: string) => async (c: pg.Client) => {
      await c.query('DELETE FROM docs WHERE id = $1', [doc]);
    };
    const heldDelete = await pgTransaction(remove(uuid));
    const deleteTicket = ticketIn(heldDelete ?? '');
    expect(ticket(deleteTicket).transaction?.statements[0]!.varies).toBeUndefined();
    await approve(deleteTicket);
    const other = crypto.randomUUID();
    await execSql(db.url, `INSERT INTO docs (id, body) VALUES ('${other}', 'keep')`);
    expect(await pgTransaction(remove(other))).toContain('held for approval');
    expect(await value(`SELECT body FROM docs WHERE id = '${other}'`)).toBe('keep');
    // A time far from the guard's clock is not "the current time".
    const old = await pgTransaction(insert(crypto.randomUUID(), new Date(Date.now() - 3_600_000)));
    expect(old).toContain('held for approval');
  });

  it('row identity: the identical statement that would now touch another row is held, not committed', async () => {
    const bump = ['BEGIN;', 'UPDATE t SET v = 100 WHERE v = 9;', 'COMMIT;'];
    const held = await psqlFile(guard.url, bump);
    const id = ticketIn(held.stderr);
    expect(ticket(id).transaction).toMatchObject({ rows: [{ schema: 'public', name: 't', keys: ['["9"]'] }] });
    await approve(id);
    // Meanwhile another session moves the value: the same statement would update row 10, one row as approved.
    await execSql(db.url, 'UPDATE t SET v = 0 WHERE id = 9; UPDATE t SET v = 9 WHERE id = 10');
    const other = await psqlFile(guard.url, bump);
    expect(other.stderr).toContain('PA001');
    const again = ticketIn(other.stderr);
    expect(ticket(again).impact.warnings.join('\n')).toContain(
      `Differs from approved ticket ${id}: public.t: other rows (approved keys ["9"], now ["10"])`,
    );
    expect(await value('SELECT v FROM t WHERE id = 10')).toBe('9');
    expect(ticket(id).status).toBe('APPROVED');
  });
});

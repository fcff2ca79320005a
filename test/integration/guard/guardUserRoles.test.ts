/**
 * Guard users in their place: a client guard user lists only the tickets its own statements opened through the
 * guard's commands (`pg_agent.tickets()`, `pg_agent.ticket(id)`), never another user's statement and its values;
 * an approver (`guard users add NAME --role approver`) sees every ticket of the guard's database. Another user's
 * ticket is answered as one that does not exist. A role that is not client or approver is refused, nothing added.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';

const SECRET = 'i38-secret-value-of-alice';

describe.skipIf(!postgresAvailable)('guard users see only their own tickets unless they approve', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const urls: Record<string, string> = {};

  /** A guard user added to the running guard (it reads its users file at each log-in). */
  async function addUser(name: string, role?: string): Promise<{ code: number | null; stderr: string }> {
    const added = await guard.pgAgent(['guard', 'users', 'add', name, '--json', ...(role ? ['--role', role] : [])]);
    if (added.code === 0) {
      const password = new URL((JSON.parse(added.stdout) as { url: string }).url).password;
      const url = new URL(guard.url);
      url.username = name;
      url.password = password;
      urls[name] = url.toString();
    }
    return added;
  }

  async function query(user: string, sql: string): Promise<{ rows: { ticket: { id: string; sql: string } }[] }> {
    const client = new pg.Client({ connectionString: urls[user] });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  }
  const tickets = async (user: string) =>
    (await query(user, 'SELECT * FROM pg_agent.tickets()')).rows.map((r) => r.ticket);

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase(
      'pgagent_i38_roles',
      ['CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)'],
      { user: 'alice' },
    ));
    urls.alice = guard.url;
    for (const [name, role] of [['bob'], ['carol', 'approver']] as const) {
      const added = await addUser(name, role);
      expect(added.code, added.stderr).toBe(0);
    }
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  it("shows alice's held write to alice and to the approver, never to bob", async () => {
    const held = await query('alice', `INSERT INTO notes (body) VALUES ('${SECRET}')`).then(
      () => undefined,
      (error: pg.DatabaseError) => error,
    );
    expect(held?.code).toBe('PA001');
    const id = /ticket (tkt_[a-z0-9]+)/.exec(held?.message ?? '')?.[1] ?? '';
    expect(id).toMatch(/^tkt_/);
    const bobs = await query('bob', 'INSERT INTO notes (body) VALUES ($$bob$$)').catch(
      (error: pg.DatabaseError) => error,
    );
    expect((bobs as pg.DatabaseError).code).toBe('PA001');

    const aliceSees = await tickets('alice');
    expect(aliceSees.map((t) => t.id)).toEqual([id]);
    expect(aliceSees[0]!.sql).toContain(SECRET);

    const bobSees = await tickets('bob');
    expect(bobSees).toHaveLength(1);
    expect(bobSees.map((t) => t.id)).not.toContain(id);
    expect(JSON.stringify(bobSees)).not.toContain(SECRET);
    const bobAsks = await query('bob', `SELECT * FROM pg_agent.ticket('${id}')`).catch(
      (error: pg.DatabaseError) => error,
    );
    expect((bobAsks as pg.DatabaseError).code).toBe('42704');
    expect(JSON.stringify(bobAsks)).not.toContain(SECRET);

    const carolSees = (await tickets('carol')).map((t) => t.id);
    expect(carolSees).toContain(id);
    expect(carolSees).toHaveLength(2);
    const carolAsks = await query('carol', `SELECT * FROM pg_agent.ticket('${id}')`);
    expect(JSON.stringify(carolAsks.rows)).toContain(SECRET);
    // Nothing ran for any of them.
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM notes'))).toBe(0);
  });

  it('refuses a role that is not client or approver, adding nobody, and lists the approver as such', async () => {
    const refused = await addUser('dave', 'root');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--role "root" is not client or approver');
    const listed = await guard.pgAgent(['guard', 'users', 'list']);
    expect(listed.stdout.split('\n').filter(Boolean).sort()).toEqual(['alice', 'bob', 'carol (approver)']);
  });
});

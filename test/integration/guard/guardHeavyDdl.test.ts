/**
 * Heavy DDL inside a client transaction through `pg-agent guard` (src/guard/transaction/heavyDdl.ts; SPEC §5
 * 4a, 6), with node-postgres: held at that statement (PA001, analysed, not executed, rolled back), run only in
 * an approved retry after a check of who holds a conflicting lock and under a short lock_timeout (55P03), and
 * committed only as exactly an approved transaction. Every assertion reads the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded, storedTicket } from '../../support/guardProcess';
import { connect as connectTo, failure } from '../../support/pgClients';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { execSql, postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';

describe.skipIf(!postgresAvailable)('pg-agent guard: heavy DDL in a transaction', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const value = (sql: string) => queryValue(db.url, sql);
  const count = async (sql: string) => Number(await value(sql));
  const ticketFile = (id: string) => storedTicket(guard, id);
  const approve = async (id: string) => expect((await guard.pgAgent(['approvals', 'approve', id])).code).toBe(0);
  const indexExists = () => value("SELECT to_regclass('big_id') IS NOT NULL");
  const column = (name: string) =>
    count(
      `SELECT count(*) FROM pg_attribute WHERE attrelid = 'big'::regclass AND attname = '${name}' AND NOT attisdropped`,
    );

  /** Nothing of the guard's client left upstream: no session idle in a transaction, no lock of it held or queued. */
  const nothingLeftOpen = async (except = 'none') => {
    expect(
      await count(
        `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND application_name <> '${except}'`,
      ),
    ).toBe(0);
    expect(
      await count(
        `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE a.datname = current_database() AND l.locktype = 'relation' AND l.pid <> pg_backend_pid() AND a.application_name <> '${except}'`,
      ),
    ).toBe(0);
  };

  const connect = () => connectTo(guard.url, 'guard-heavy');

  beforeAll(async () => {
    // Above smallTableRows (10k): a write-blocking lock on it is heavy.
    ({ db, guard } = await guardedDatabase('pgagent_guard_heavy', [
      "CREATE TABLE accounts (id serial PRIMARY KEY, name text NOT NULL); INSERT INTO accounts (name) VALUES ('ann'), ('bob')",
      'CREATE TABLE big AS SELECT g AS id FROM generate_series(1, 12000) g; ANALYZE big',
    ]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  it('holds the transaction at a heavy CREATE INDEX (1..N); approved, a longer retry runs it but never commits; the exact retry commits once', async () => {
    const client = await connect();
    const run = async (extra?: string) => {
      await client.query('BEGIN');
      await client.query("INSERT INTO accounts (name) VALUES ('eve')");
      const index = await failure(client.query('CREATE INDEX big_id ON big (id)'));
      if (index) {
        await client.query('ROLLBACK');
        return index;
      }
      if (extra) await client.query(extra);
      const commit = await failure(client.query('COMMIT'));
      if (commit) await client.query('ROLLBACK').catch(() => undefined);
      return commit;
    };
    try {
      const held = await run();
      expect(held?.code).toBe('PA001');
      expect(held?.message).toContain('statement 2 is heavy DDL, analysed, not executed');
      const first = ticketIn(held?.message ?? '');
      const warnings = ticketFile(first).impact.warnings.join('\n');
      expect(warnings).toContain('CREATE INDEX big_id ON big (id) would hold SHARE on public.big');
      expect(warnings).toContain('not measured from statement 2 on');
      expect(await indexExists()).toBe(false);
      expect(await count("SELECT count(*) FROM accounts WHERE name = 'eve'")).toBe(0);
      await nothingLeftOpen();
      await approve(first);

      // The approved heavy prefix, then a statement the ticket does not have: the index is built, then rolled back.
      const longer = await run("DELETE FROM accounts WHERE name = 'ann'");
      expect(longer?.code).toBe('PA001');
      const second = ticketIn(longer?.message ?? '');
      expect([first, ''].includes(second)).toBe(false);
      expect(ticketFile(second).sql).toContain('DELETE FROM accounts');
      expect(ticketFile(second).impact.warnings.join('\n')).toContain(
        `heavy DDL approved on ticket ${first}: it ran for real`,
      );
      expect(await indexExists()).toBe(false);
      expect(await count("SELECT count(*) FROM accounts WHERE name IN ('ann', 'eve')")).toBe(1);
      await nothingLeftOpen();

      // Exactly the approved statements: committed once.
      expect(await run()).toBeUndefined();
      expect(await indexExists()).toBe(true);
      expect(await count("SELECT count(*) FROM accounts WHERE name = 'eve'")).toBe(1);
      expect(ticketFile(first).status).toBe('EXECUTED');
      expect(ticketFile(second).status).toBe('PENDING_APPROVAL');
      // Spent: the same transaction again is held on a new ticket, and runs nothing heavy.
      await execSql(db.url, 'DROP INDEX big_id');
      const spent = await run();
      expect(spent?.code).toBe('PA001');
      expect([first, second].includes(ticketIn(spent?.message ?? ''))).toBe(false);
      expect(await indexExists()).toBe(false);
      await nothingLeftOpen();
    } finally {
      await client.end();
    }
  }, 60_000);

  it('an approved heavy statement meets a lock of another session: 55P03, nothing committed, no lock left queued; once it is gone, the retry commits', async () => {
    const holder = await connectTo(db.url, 'guard-holder');
    const client = await connect();
    const run = async () => {
      await client.query('BEGIN');
      const alter = await failure(client.query('ALTER TABLE big ADD COLUMN note text'));
      const done = alter ?? (await failure(client.query('COMMIT')));
      if (done) await client.query('ROLLBACK').catch(() => undefined);
      return done;
    };
    try {
      const held = await run();
      expect(held?.code).toBe('PA001');
      expect(ticketFile(ticketIn(held?.message ?? '')).impact.warnings.join('\n')).toContain(
        'would hold ACCESS EXCLUSIVE on public.big',
      );
      await approve(ticketIn(held?.message ?? ''));
      await holder.query('BEGIN');
      await holder.query('SELECT count(*) FROM big');
      const locked = await run();
      expect(locked?.code).toBe('55P03');
      expect(locked?.message).toContain('another session is in the way');
      expect(locked?.message).toContain('holds ACCESS SHARE on public.big');
      expect(await column('note')).toBe(0);
      // Only the holder's own lock: the guard's session neither holds nor awaits one.
      await nothingLeftOpen('guard-holder');
      expect(await count("SELECT count(*) FROM pg_locks WHERE relation = 'big'::regclass AND NOT granted")).toBe(0);
      await holder.query('ROLLBACK');
      expect(await run()).toBeUndefined();
      expect(await column('note')).toBe(1);
      await nothingLeftOpen();
    } finally {
      await client.end();
      await holder.end();
    }
  }, 60_000);
  it('an approved ticket lets its heavy statement run a bounded number of times in retries that do not commit; heavy DDL through Parse/Bind is refused (PA002)', async () => {
    const client = await connect();
    const longer = async () => {
      await client.query('BEGIN');
      const alter = await failure(client.query('ALTER TABLE big ADD COLUMN capped int'));
      if (!alter) await client.query("INSERT INTO accounts (name) VALUES ('loop')");
      const done = alter ?? (await failure(client.query('COMMIT')));
      await client.query('ROLLBACK').catch(() => undefined);
      return done;
    };
    try {
      const first = ticketIn((await longer())?.message ?? '');
      expect(first).not.toBe('');
      await approve(first);
      // The approved ALTER runs with its statement budget lifted; right after it, the 250 ms budget is back.
      await client.query('BEGIN');
      await client.query('ALTER TABLE big ADD COLUMN capped int');
      expect((await failure(client.query('SELECT pg_sleep(5)')))?.code).toBe('57014');
      await client.query('ROLLBACK');
      const heldAt: string[] = [];
      for (let i = 0; i < 5; i++) heldAt.push((await longer())?.message ?? '');
      // Four more runs (five in all, MAX_HEAVY_RUNS): each ran the approved ALTER, then was held at COMMIT for the INSERT.
      const atCommit = heldAt.slice(0, 4).map(ticketIn);
      expect(new Set(atCommit).size).toBe(1);
      expect([first, ''].includes(atCommit[0] ?? '')).toBe(false);
      expect(heldAt.slice(0, 4).some((m) => m.includes('heavy DDL, analysed'))).toBe(false);
      expect(ticketFile(atCommit[0] ?? '').impact.warnings.join('\n')).toContain(
        `heavy DDL approved on ticket ${first}: it ran for real`,
      );
      // Then the ticket no longer lets it run: held at the ALTER again, on a new ticket.
      expect(heldAt[4]).toContain('statement 1 is heavy DDL, analysed, not executed');
      expect([first, ...atCommit].includes(ticketIn(heldAt[4] ?? ''))).toBe(false);
      expect(await column('capped')).toBe(0);
      expect(await count("SELECT count(*) FROM accounts WHERE name = 'loop'")).toBe(0);

      await client.query('BEGIN');
      const prepared = await failure(client.query({ name: 'heavy', text: 'CREATE INDEX big_prepared ON big (id)' }));
      expect(prepared?.code).toBe('PA002');
      expect(prepared?.message).toContain('only when sent as a simple query');
      expect(prepared?.message).toContain('preferQueryMode=simple');
      await client.query('ROLLBACK');
      expect(await value("SELECT to_regclass('big_prepared') IS NULL")).toBe(true);
      await nothingLeftOpen();
    } finally {
      await client.end();
    }
  }, 60_000);
});

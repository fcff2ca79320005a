/**
 * A transaction approved as a whole through `pg-agent guard` (issue 24 P4), with node-postgres:
 * BEGIN; INSERT … RETURNING id; UPDATE … WHERE id = $1 (the returned id); COMMIT. Held at COMMIT on ONE
 * ticket (rolled back at once: nothing committed, no lock held while a person decides); approved, the
 * client's retry (a different returned id) commits once; a retry with another template is a new ticket.
 * Every assertion reads the database (rows, pg_locks, the ticket file).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';
import { connect } from '../../support/pgClients';

/** The ORM's transaction: the id the INSERT returns is used by the UPDATE. Resolves to the COMMIT's error, if any. */
async function orderTransaction(
  client: pg.Client,
  customer: string,
  note = 'paid',
): Promise<{ id: number; error?: pg.DatabaseError }> {
  await client.query('BEGIN');
  const inserted = await client.query<{ id: number }>(
    `INSERT INTO orders (customer) VALUES ('${customer}') RETURNING id`,
  );
  const id = inserted.rows[0]!.id;
  await client.query('UPDATE orders SET note = $1 WHERE id = $2', [note, id]);
  const error = await client.query('COMMIT').then(
    () => undefined,
    (e: pg.DatabaseError) => e,
  );
  return { id, ...(error ? { error } : {}) };
}

describe.skipIf(!postgresAvailable)('pg-agent guard: a transaction approved as a whole', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const orders = async () => Number(await queryValue(db.url, 'SELECT count(*) FROM orders'));

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_tx', [
      'CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, note text)',
    ]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  it('holds the transaction at COMMIT on one ticket, commits nothing and holds no lock; approved, the retry with a new id commits once', async () => {
    const client = await connect(guard.url, 'guard-tx');
    try {
      const first = await orderTransaction(client, 'ann');
      expect(first.error?.code).toBe('PA001');
      const ticket = ticketIn(first.error?.message ?? '');
      expect(ticket).not.toBe('');
      expect(await orders()).toBe(0);
      // Rolled back upstream at once: no lock of the client's session on the table while a person decides.
      const locks = await queryValue(
        db.url,
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = 'guard-tx' AND l.relation = 'orders'::regclass",
      );
      expect(Number(locks)).toBe(0);
      const stored = JSON.parse(
        readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8'),
      ) as { sql: string; impact: { tables: { name: string; inserted: number; updated: number }[] } };
      expect(stored.sql).toContain("INSERT INTO orders (customer) VALUES ('ann') RETURNING id;");
      expect(stored.sql).toContain(`UPDATE orders SET note = 'paid' WHERE id = '${first.id}'`);
      expect(stored.impact.tables).toEqual([expect.objectContaining({ name: 'orders', inserted: 1, updated: 1 })]);
      // The same transaction again before the decision finds the same ticket.
      const again = await orderTransaction(client, 'ann');
      expect(ticketIn(again.error?.message ?? '')).toBe(ticket);

      expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
      expect(await orders()).toBe(0);
      // Not replayable with its recorded values (the UPDATE names the id of the rolled-back run): exec refuses.
      const replay = await guard.pgAgent(['exec', '--ticket', ticket]);
      expect(replay.code).not.toBe(0);
      expect(replay.stderr + replay.stdout).toContain('holds a client transaction through pg-agent guard');
      expect(await orders()).toBe(0);
      const retry = await orderTransaction(client, 'ann');
      expect(retry.error).toBeUndefined();
      expect(retry.id).not.toBe(first.id);
      expect(await queryValue(db.url, "SELECT count(*) || ':' || max(id) || ':' || max(note) FROM orders")).toBe(
        `1:${retry.id}:paid`,
      );
      const executed = JSON.parse(
        readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8'),
      ) as { status: string };
      expect(executed.status).toBe('EXECUTED');

      // Spent: the same transaction once more is a new ticket, and commits nothing.
      const third = await orderTransaction(client, 'ann');
      expect(third.error?.code).toBe('PA001');
      expect(ticketIn(third.error?.message ?? '')).not.toBe(ticket);
      expect(await orders()).toBe(1);
    } finally {
      await client.end();
    }
  });

  it('holds a retry with another statement template on a new ticket, and commits nothing', async () => {
    const client = await connect(guard.url, 'guard-tx');
    try {
      const first = await orderTransaction(client, 'bob');
      const ticket = ticketIn(first.error?.message ?? '');
      const approved = await guard.pgAgent(['approvals', 'approve', ticket]);
      expect(approved.stderr).toBe('');
      const before = await orders();
      await client.query('BEGIN');
      const inserted = await client.query<{ id: number }>("INSERT INTO orders (customer) VALUES ('bob') RETURNING id");
      await client.query('UPDATE orders SET note = $1, customer = $2 WHERE id = $3', [
        'paid',
        'eve',
        inserted.rows[0]!.id,
      ]);
      const other = await client.query('COMMIT').catch((e: pg.DatabaseError) => e);
      expect((other as pg.DatabaseError).code).toBe('PA001');
      expect(ticketIn((other as pg.DatabaseError).message)).not.toBe(ticket);
      expect(await orders()).toBe(before);
      expect(Number(await queryValue(db.url, "SELECT count(*) FROM orders WHERE customer = 'eve'"))).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('rolls back a retry with the same templates whose effects exceed the approved ones, and holds it on a new ticket', async () => {
    const client = await connect(guard.url, 'guard-tx');
    const batch = async (n: number) => {
      await client.query('BEGIN');
      await client.query(`INSERT INTO orders (customer) SELECT 'batch' FROM generate_series(1, ${n})`);
      return client.query('COMMIT').then(
        () => undefined,
        (e: pg.DatabaseError) => e,
      );
    };
    try {
      const before = await orders();
      const ticket = ticketIn((await batch(1))?.message ?? '');
      expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
      const bigger = await batch(5);
      expect(bigger?.code).toBe('PA001');
      expect(bigger?.message).toContain(
        `the approved ticket ${ticket} did not cover it (public.orders: 5 inserted, approved 1)`,
      );
      expect(await orders()).toBe(before);
      // The approval is not spent by a retry that did not commit: the approved size still commits once.
      expect(await batch(1)).toBeUndefined();
      expect(await orders()).toBe(before + 1);
    } finally {
      await client.end();
    }
  });

  it('rolls back and refuses a SAVEPOINT inside a measured transaction; ROLLBACK ends it cleanly', async () => {
    const client = await connect(guard.url, 'guard-tx');
    try {
      const before = await orders();
      await client.query('BEGIN');
      await client.query("INSERT INTO orders (customer) VALUES ('sp')");
      const refused = await client.query('SAVEPOINT s1').catch((e: pg.DatabaseError) => e);
      expect((refused as pg.DatabaseError).code).toBe('PA002');
      await client.query('ROLLBACK');
      expect(await orders()).toBe(before);
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await client.query('BEGIN');
      await client.query("INSERT INTO orders (customer) VALUES ('rb')");
      await client.query('ROLLBACK');
      expect(await orders()).toBe(before);
    } finally {
      await client.end();
    }
  });

  it('never lets a COMMIT prepared before the transaction (extended protocol) commit its measured writes', async () => {
    const client = await connect(guard.url, 'guard-tx');
    try {
      const before = await orders();
      // node-postgres parses a named statement once, then only binds and executes it.
      await client.query({ name: 'end-it', text: 'COMMIT' });
      await client.query('BEGIN');
      await client.query("INSERT INTO orders (customer) VALUES ('sneaky')");
      const refused = await client.query({ name: 'end-it', text: 'COMMIT' }).catch((e: pg.DatabaseError) => e);
      expect((refused as pg.DatabaseError).code).toBe('PA002');
      await client.query('ROLLBACK');
      expect(await orders()).toBe(before);
      expect(Number(await queryValue(db.url, "SELECT count(*) FROM orders WHERE customer = 'sneaky'"))).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('keeps the old answer (ROLLBACK, PA002) for a write after the transaction already read', async () => {
    const client = await connect(guard.url, 'guard-tx');
    try {
      const before = await orders();
      await client.query('BEGIN');
      await client.query('SELECT count(*) FROM orders');
      const refused = await client
        .query("INSERT INTO orders (customer) VALUES ('late')")
        .catch((e: pg.DatabaseError) => e);
      expect((refused as pg.DatabaseError).code).toBe('PA002');
      await client.query('ROLLBACK');
      expect(await orders()).toBe(before);
      // DDL inside a transaction: test/integration/guardMigrations.test.ts.
    } finally {
      await client.end();
    }
  });
});

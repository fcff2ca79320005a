/**
 * A client transaction through `pg-agent guard` on a database that keeps the execution ledger (SPEC §5 6,
 * issue 24 item 3): approved, the client's retry commits once WITH its ledger row (written in the client's own
 * transaction before COMMIT); the ticket file reset to APPROVED by hand, the same transaction again is refused
 * by the ledger and commits nothing; two clients committing the same approved transaction at once commit it once. node-postgres is the client; every assertion reads the database.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';

/** The same ledger table `pg-agent policy init` creates (core/approvals/pgagentSchema.ts), without a pinned policy. */
const LEDGER = `CREATE SCHEMA pgagent;
CREATE TABLE pgagent.executions (
  ticket_id text PRIMARY KEY, sql_hash text NOT NULL, executed_at timestamptz NOT NULL DEFAULT now(), xid text, by text NOT NULL,
  status text NOT NULL DEFAULT 'done' CHECK (status IN ('running', 'done', 'failed')))`;

describe.skipIf(!postgresAvailable)('pg-agent guard: a transaction on a database with the execution ledger', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let client: pg.Client;
  const orders = async () => Number(await queryValue(db.url, 'SELECT count(*) FROM orders'));
  const ticketFile = (id: string) => join(guard.workspace, '.pgagent', 'approvals', `${id}.json`);

  /** BEGIN; INSERT … RETURNING id; UPDATE by that id; COMMIT. Resolves to the COMMIT's error, if any. */
  async function orderTransaction(): Promise<pg.DatabaseError | undefined> {
    await client.query('BEGIN');
    const inserted = await client.query<{ id: number }>("INSERT INTO orders (customer) VALUES ('ann') RETURNING id");
    await client.query('UPDATE orders SET note = $1 WHERE id = $2', ['paid', inserted.rows[0]!.id]);
    return client.query('COMMIT').then(
      () => undefined,
      (e: pg.DatabaseError) => e,
    );
  }

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_ledger', [
      `CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, note text); ${LEDGER}`,
    ]));
    client = new pg.Client({ connectionString: guard.url, application_name: 'guard-ledger' });
    client.on('error', () => undefined);
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    if (process.env.GUARD_DEBUG) console.log(guard?.stderr());
    await client?.end().catch(() => undefined);
    await stopGuarded(guard, db);
  });

  it('commits the approved transaction once with its ledger row; a ticket reset to APPROVED is refused by the ledger', async () => {
    const held = await orderTransaction();
    expect(held?.code).toBe('PA001');
    const ticket = ticketIn(held?.message ?? '');
    expect(ticket).not.toBe('');
    expect(await orders()).toBe(0);
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);

    expect(await orderTransaction()).toBeUndefined();
    expect(await orders()).toBe(1);
    const executed = JSON.parse(readFileSync(ticketFile(ticket), 'utf8')) as {
      status: string;
      sqlHash: string;
      execution: { xid: string };
    };
    expect(executed.status).toBe('EXECUTED');
    // The ledger row committed with the client's writes: same transaction id as the one that inserted the order.
    expect(
      await queryValue(
        db.url,
        `SELECT status || ':' || sql_hash || ':' || xid FROM pgagent.executions WHERE ticket_id = '${ticket}'`,
      ),
    ).toBe(`done:${executed.sqlHash}:${executed.execution.xid}`);
    expect(await queryValue(db.url, 'SELECT xmin::text FROM orders')).toBe(executed.execution.xid);

    // A process that can write the workspace resets the ticket: the ledger, in the database, still refuses it.
    const reset = JSON.parse(readFileSync(ticketFile(ticket), 'utf8')) as Record<string, unknown>;
    reset.status = 'APPROVED';
    delete reset.execution;
    writeFileSync(ticketFile(ticket), JSON.stringify(reset));
    const replay = await orderTransaction();
    expect(replay?.code).toBe('PA002');
    expect(replay?.message).toContain('execution ledger');
    expect(await orders()).toBe(1);
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM pgagent.executions'))).toBe(1);
    // Rolled back: the client's session is usable and holds no lock.
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(
      Number(
        await queryValue(
          db.url,
          "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = 'guard-ledger' AND l.relation = 'orders'::regclass",
        ),
      ),
    ).toBe(0);
  });

  it('two clients commit the same approved transaction at once: one commits (one ledger row), the other is rolled back', async () => {
    const before = await orders();
    await client.query('BEGIN');
    await client.query("INSERT INTO orders (customer) VALUES ('twice')");
    const held = await client.query('COMMIT').catch((e: pg.DatabaseError) => e);
    const ticket = ticketIn((held as pg.DatabaseError).message);
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    const clients = await Promise.all(
      [1, 2].map(async () => {
        const c = new pg.Client({ connectionString: guard.url });
        c.on('error', () => undefined);
        await c.connect();
        await c.query('BEGIN');
        await c.query("INSERT INTO orders (customer) VALUES ('twice')");
        return c;
      }),
    );
    try {
      // Both measured and waiting at COMMIT; sent together.
      const answers = await Promise.all(
        clients.map((c) =>
          c.query('COMMIT').then(
            () => 'committed',
            (e: pg.DatabaseError) => e.code ?? 'error',
          ),
        ),
      );
      // One commits. The other is refused: PA002 when it claimed while the first was executing; PA001 (held again, on a
      // new ticket) when its COMMIT was judged after the first had executed (seen in CI on a loaded machine). Either
      // way it did not run: the table and the ledger below.
      const [refused, committed] = answers.sort();
      expect(committed).toBe('committed');
      expect(['PA001', 'PA002']).toContain(refused);
      expect(await orders()).toBe(before + 1);
      expect(
        Number(await queryValue(db.url, `SELECT count(*) FROM pgagent.executions WHERE ticket_id = '${ticket}'`)),
      ).toBe(1);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});

/**
 * `pg-agent guard status` lists what the guard holds (issue 24 item 4): a held statement (psql's DELETE) and a held
 * transaction (node-postgres: BEGIN; INSERT … RETURNING id; UPDATE …; COMMIT) with its ticket, its statement count,
 * rows per table and since when, in text and --json; the transaction is one proposal file (what VS Code shows as one
 * card), its statements in order with their values. Approved, it is listed as waiting for the client's retry; once
 * the retry commits it is gone from the list. Every count is checked against the database. Two guards serving one
 * workspace (a window's and a terminal's) are both listed, each with its own status file; one stopping or killed
 * does not hide the other, and a dead guard's file is removed by the next guard that starts there (by its own
 * name: a forged file whose pid is a path removes nothing else).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, startGuardProcess, stopGuarded } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { runPsql, ticketIn } from '../../support/psqlRun';

interface Held {
  ticket: string;
  status: string;
  statements: number;
  tables: { table: string; inserted: number; updated: number; deleted: number }[];
  since: string;
  clients: number[];
}

const psql = async (url: string, sql: string): Promise<string> => (await runPsql(['-q', url, '-c', sql])).stderr;

async function orderTransaction(client: pg.Client): Promise<{ id: number; error?: pg.DatabaseError }> {
  await client.query('BEGIN');
  const id = (await client.query<{ id: number }>("INSERT INTO orders (customer) VALUES ('ann') RETURNING id")).rows[0]!
    .id;
  await client.query('UPDATE orders SET note = $1 WHERE id = $2', ['paid', id]);
  const error = await client.query('COMMIT').then(
    () => undefined,
    (e: pg.DatabaseError) => e,
  );
  return { id, ...(error ? { error } : {}) };
}

describe.skipIf(!postgresAvailable)('pg-agent guard status with held statements and transactions', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const status = async () =>
    JSON.parse((await guard.pgAgent(['guard', 'status', '--json'])).stdout) as {
      running: boolean;
      clients: { id: number; held: string[] }[];
      heldStatements: Held[];
      heldTransactions: Held[];
    };

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_status', [
      "CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, note text); INSERT INTO orders (customer) VALUES ('old');",
    ]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  it('lists the held transaction with its statements and rows per table, then follows it to committed', async () => {
    const client = new pg.Client({ connectionString: guard.url, application_name: 'orders-app' });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const deleteTicket = ticketIn(await psql(guard.url, 'DELETE FROM orders WHERE id = 1'));
      const first = await orderTransaction(client);
      expect(first.error?.code).toBe('PA001');
      const ticket = ticketIn(first.error?.message ?? '');
      expect(Number(await queryValue(db.url, 'SELECT count(*) FROM orders'))).toBe(1);

      const listed = await status();
      expect(listed.running).toBe(true);
      const me = listed.clients.find((c) => c.held.includes(ticket));
      expect(me).toBeDefined();
      expect(listed.heldTransactions).toEqual([
        expect.objectContaining({
          ticket,
          status: 'PENDING_APPROVAL',
          statements: 2,
          tables: [expect.objectContaining({ table: 'public.orders', inserted: 1, updated: 1, deleted: 0 })],
          clients: [me!.id],
        }),
      ]);
      expect(Date.parse(listed.heldTransactions[0]!.since)).not.toBeNaN();
      expect(listed.heldStatements).toEqual([
        expect.objectContaining({
          ticket: deleteTicket,
          statements: 1,
          tables: [expect.objectContaining({ table: 'public.orders', deleted: 1 })],
        }),
      ]);
      const text = (await guard.pgAgent(['guard', 'status'])).stdout;
      expect(text).toContain('1 held statement(s)');
      expect(text).toContain('1 held transaction(s)');
      expect(text).toMatch(
        new RegExp(`${ticket} waiting for approval · 2 statements · \\w+ · public\\.orders \\+1 ~1 · by alice since `),
      );

      // One proposal file for the whole transaction: what VS Code shows as one card, the statements in order with values.
      const proposal = readFileSync(join(guard.workspace, '.pgagent', 'proposals', `${ticket}.sql`), 'utf8');
      expect(proposal).toContain("the client's retry through the guard commits it");
      // Its rows are the measured run's (the preview's replay of the recorded id would match nothing now).
      const stored = JSON.parse(
        readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8'),
      ) as { impact: { exactRows: number } };
      expect(stored.impact.exactRows).toBe(2);
      expect(proposal).toContain(
        `INSERT INTO orders (customer) VALUES ('ann') RETURNING id;\nUPDATE orders SET note = 'paid' WHERE id = '${first.id}'`,
      );

      expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
      expect((await status()).heldTransactions).toEqual([expect.objectContaining({ ticket, status: 'APPROVED' })]);
      expect((await guard.pgAgent(['guard', 'status'])).stdout).toContain(
        `${ticket} approved, waiting for the client's retry`,
      );

      const retry = await orderTransaction(client);
      expect(retry.error).toBeUndefined();
      expect(await queryValue(db.url, "SELECT count(*) || ':' || max(note) FROM orders WHERE customer = 'ann'")).toBe(
        '1:paid',
      );
      const after = await status();
      expect(after.heldTransactions).toEqual([]);
      expect(after.heldStatements.map((h) => h.ticket)).toEqual([deleteTicket]);
    } finally {
      await client.end();
    }
  });

  it('lists two guards serving the same workspace; one stopped or killed does not hide the other', async () => {
    type Listed = { running: boolean; pid: number; guards: { running: boolean; pid: number; listen: string }[] };
    const listed = async () => {
      const run = await guard.pgAgent(['guard', 'status', '--json']);
      return { code: run.code, ...(JSON.parse(run.stdout) as Listed) };
    };
    const fileOf = (pid: number) => join(guard.workspace, '.pgagent', 'guard', `status-${pid}.json`);
    const first = guard.child.pid!;
    const second = await startGuardProcess(db.url, { user: 'bob', workspace: guard.workspace });
    const secondPid = second.child.pid!;
    try {
      await expect
        .poll(
          async () =>
            (await listed()).guards
              .filter((g) => g.running)
              .map((g) => g.pid)
              .sort(),
          { timeout: 20_000 },
        )
        .toEqual([first, secondPid].sort());
      const both = await listed();
      expect(both.code).toBe(0);
      // The most recently started first, its fields at the top as when one guard ran per workspace.
      expect(both.pid).toBe(secondPid);
      expect(both.guards.find((g) => g.pid === secondPid)?.listen).toContain(`:${second.port}/`);
      const text = (await guard.pgAgent(['guard', 'status'])).stdout;
      expect(text).toContain(`Guard pid ${first} on `);
      expect(text).toContain(`Guard pid ${secondPid} on `);
    } finally {
      await second.stop();
    }
    expect(existsSync(fileOf(secondPid))).toBe(false);
    const alone = await listed();
    expect(alone).toMatchObject({ code: 0, running: true, pid: first });
    expect(alone.guards.map((g) => g.pid)).toEqual([first]);

    // Killed: its file stays (listed as not running) until the next guard starting in the workspace removes it.
    const killed = await startGuardProcess(db.url, { user: 'carol', workspace: guard.workspace });
    const killedPid = killed.child.pid!;
    await expect.poll(() => existsSync(fileOf(killedPid)), { timeout: 20_000 }).toBe(true);
    await killed.kill();
    const afterKill = await listed();
    expect(afterKill).toMatchObject({ code: 0, running: true, pid: first });
    expect(afterKill.guards).toEqual([
      expect.objectContaining({ pid: first, running: true }),
      expect.objectContaining({ pid: killedPid, running: false }),
    ]);
    // A forged status file (anyone who can write the workspace) whose pid is a path: removed by its own name only.
    const forged = join(guard.workspace, '.pgagent', 'guard', 'status-999999.json');
    writeFileSync(forged, JSON.stringify({ pid: '/../users', listen: 'x', upstream: 'x', startedAt: '', clients: [] }));
    const users = join(guard.workspace, '.pgagent', 'guard', 'users.json');
    const next = await startGuardProcess(db.url, { user: 'dave', workspace: guard.workspace });
    try {
      await expect.poll(() => existsSync(fileOf(killedPid)), { timeout: 20_000 }).toBe(false);
      expect(existsSync(forged)).toBe(false);
      expect(existsSync(users)).toBe(true);
      expect((await listed()).guards.map((g) => g.pid).sort()).toEqual([first, next.child.pid!].sort());
    } finally {
      await next.stop();
    }
  });
});

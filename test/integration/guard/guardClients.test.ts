/**
 * `pg-agent guard` with node-postgres (simple and extended protocol, parameters, a cursor's Execute row
 * limit) and the faults of issue 24: a malformed message, a client gone mid-transaction, a killed guard.
 * Every assertion reads the database itself: rows, tickets, and the sessions pg_stat_activity still shows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type pg from 'pg';
import Cursor from 'pg-cursor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, sessionsOf, startGuardProcess, stopGuarded, tableOfRows } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';
import { connect } from '../../support/pgClients';

describe.skipIf(!postgresAvailable)('pg-agent guard with node-postgres, and its faults', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_pg', [tableOfRows(5)]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  const count = async () => Number(await queryValue(db.url, 'SELECT count(*) FROM t'));

  it('runs reads with parameters (extended protocol) and streams a cursor in Execute-limited pieces', async () => {
    const client = await connect(guard.url, 'guard-pg-reads');
    try {
      const sum = await client.query<{ x: number }>('SELECT $1::int + 1 AS x', [41]);
      expect(sum.rows).toEqual([{ x: 42 }]);
      const named = await client.query<{ v: string }>({
        name: 'by-id',
        text: 'SELECT v FROM t WHERE id = $1',
        values: [3],
      });
      const again = await client.query<{ v: string }>({
        name: 'by-id',
        text: 'SELECT v FROM t WHERE id = $1',
        values: [4],
      });
      expect([named.rows[0]?.v, again.rows[0]?.v]).toEqual(['v3', 'v4']);
      const cursor = client.query(new Cursor('SELECT g FROM generate_series(1, 10) g'));
      const first = await cursor.read(4);
      const second = await cursor.read(4);
      const rest = await cursor.read(4);
      await cursor.close();
      expect([first.length, second.length, rest.length]).toEqual([4, 4, 2]);
      expect(rest.map((r: { g: number }) => r.g)).toEqual([9, 10]);
    } finally {
      await client.end();
    }
  });

  it('holds a parameterised DELETE with its values, runs it once approved, and holds other values anew', async () => {
    const client = await connect(guard.url, 'guard-pg-writes');
    try {
      const held = await client.query('DELETE FROM t WHERE id = $1', [2]).then(
        () => undefined,
        (error: pg.DatabaseError) => error,
      );
      expect(held?.code).toBe('PA001');
      const ticket = ticketIn(held?.message ?? '');
      const stored = JSON.parse(
        readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8'),
      ) as { sql: string };
      expect(stored.sql).toBe("DELETE FROM t WHERE id = '2'");
      expect(await count()).toBe(5);
      // The client's connection goes on after a held statement.
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);

      expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
      const ran = await client.query('DELETE FROM t WHERE id = $1', [2]);
      expect(ran.rowCount).toBe(1);
      expect(await count()).toBe(4);

      const other = await client.query('DELETE FROM t WHERE id = $1', [3]).catch((error: pg.DatabaseError) => error);
      expect((other as pg.DatabaseError).code).toBe('PA001');
      expect(ticketIn((other as pg.DatabaseError).message)).not.toBe(ticket);
      expect(await count()).toBe(4);
    } finally {
      await client.end();
    }
  });

  it('leaves a proposal file for VS Code, and tells the retry of a statement run there (approved and run elsewhere) that it ran', async () => {
    const client = await connect(guard.url, 'guard-pg-elsewhere');
    try {
      const held = (await client
        .query("UPDATE t SET v = 'elsewhere' WHERE id = 4")
        .catch((error: pg.DatabaseError) => error)) as pg.DatabaseError;
      const ticket = ticketIn(held.message);
      const proposal = readFileSync(join(guard.workspace, '.pgagent', 'proposals', `${ticket}.sql`), 'utf8');
      expect(proposal).toContain("UPDATE t SET v = 'elsewhere' WHERE id = 4");
      // What VS Code does when a person approves it there: the decision, then the run.
      expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
      // exec refuses a guard client's ticket (its retry runs it) unless its requester forces the run here.
      expect((await guard.pgAgent(['exec', '--ticket', ticket])).code).toBe(4);
      expect((await guard.pgAgent(['exec', '--ticket', ticket, '--force', '--by', 'alice'])).code).toBe(0);
      expect(await queryValue(db.url, "SELECT count(*) FROM t WHERE v = 'elsewhere'")).toBe('1');
      const retry = await client.query("UPDATE t SET v = 'elsewhere' WHERE id = 4");
      expect(retry.rowCount).toBe(1);
      // Told once: the same text again is a new write, held.
      const again = (await client
        .query("UPDATE t SET v = 'elsewhere' WHERE id = 4")
        .catch((error: pg.DatabaseError) => error)) as pg.DatabaseError;
      expect(again.code).toBe('PA001');
      expect(ticketIn(again.message)).not.toBe(ticket);
    } finally {
      await client.end();
    }
  });

  it('closes a client that sends a malformed message with 08P01, and stays up for the others', async () => {
    const client = await connect(guard.url, 'guard-pg-malformed');
    const failed = new Promise<Error>((resolve) => client.once('error', resolve));
    const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
    // A Query whose length claims more than its bytes hold, then a Sync: the message ends inside the Sync.
    socket.write(
      Buffer.concat([
        Buffer.from('Q'),
        Buffer.from([0, 0, 0, 9]),
        Buffer.from('SEL\0'),
        Buffer.from('S'),
        Buffer.from([0, 0, 0, 4]),
      ]),
    );
    socket.write(Buffer.from([0x51, 0, 0, 0, 6, 0x41, 0x00]));
    const error = await failed;
    expect(String(error.message)).toMatch(/invalid message|Connection terminated/);
    expect(await sessionsOf(db.url, 'guard-pg-malformed')).toBe(0);
    const other = await connect(guard.url, 'guard-pg-after');
    expect((await other.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 4 }]);
    await other.end();
  });

  it('ends the upstream session of a client that disconnects inside a transaction', async () => {
    const client = await connect(guard.url, 'guard-pg-gone');
    await client.query('BEGIN');
    await client.query('SELECT * FROM t');
    expect(await sessionsOf(db.url, 'guard-pg-gone', false)).toBe(1);
    (client as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
    expect(await sessionsOf(db.url, 'guard-pg-gone')).toBe(0);
  });

  it('serves many clients at once (each its own upstream session), and ends every session when they leave', async () => {
    // 30, not 100: the machine's server allows 100 connections in all and other tests share it (pooling is not built).
    const clients = await Promise.all(Array.from({ length: 30 }, () => connect(guard.url, 'guard-pg-many')));
    const counts = await Promise.all(clients.map((c) => c.query<{ n: number }>('SELECT count(*)::int AS n FROM t')));
    expect(new Set(counts.map((r) => r.rows[0]?.n))).toEqual(new Set([4]));
    expect(await sessionsOf(db.url, 'guard-pg-many', false)).toBe(30);
    await Promise.all(clients.map((c) => c.end()));
    expect(await sessionsOf(db.url, 'guard-pg-many')).toBe(0);
  });

  it('reads a 10 MB statement through, and holds a 10 MB write without running it', async () => {
    const client = await connect(guard.url, 'guard-pg-big');
    try {
      const big = 'x'.repeat(10 * 1024 * 1024);
      const read = await client.query<{ n: number }>(`SELECT length('${big}') AS n`);
      expect(read.rows).toEqual([{ n: big.length }]);
      const held = await client
        .query(`UPDATE t SET v = '${big}' WHERE id = 5`)
        .catch((error: pg.DatabaseError) => error);
      expect((held as pg.DatabaseError).code).toBe('PA001');
      expect(await queryValue(db.url, 'SELECT v FROM t WHERE id = 5')).toBe('v5');
    } finally {
      await client.end();
    }
  }, 60_000);

  it('commits nothing and leaves no session when the guard is killed while a write waits', async () => {
    const second = await startGuardProcess(db.url, { user: 'bob' });
    const client = await connect(second.url, 'guard-pg-killed');
    const held = await client.query('UPDATE t SET v = $1', ['killed']).catch((error: pg.DatabaseError) => error);
    const ticket = ticketIn((held as pg.DatabaseError).message);
    expect((await second.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    await client.query('BEGIN');
    await client.query('SELECT * FROM t');
    await second.kill();
    expect(await sessionsOf(db.url, 'guard-pg-killed')).toBe(0);
    expect(Number(await queryValue(db.url, "SELECT count(*) FROM t WHERE v = 'killed'"))).toBe(0);
    // The approved ticket is still there for the next guard; nothing ran it.
    expect(readdirSync(join(second.workspace, '.pgagent', 'approvals'))).toContain(`${ticket}.json`);
    expect(
      (
        JSON.parse(readFileSync(join(second.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8')) as {
          status: string;
        }
      ).status,
    ).toBe('APPROVED');
  });
});

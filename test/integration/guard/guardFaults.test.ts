/**
 * `pg-agent guard` (dist/cli.js, its own process) under bad input and faults (issue 24 item 5): malformed
 * protocol bytes from a raw socket, clients that vanish mid-transaction or after a held statement, a
 * cancelled upstream read, 10 MB statements, a guard killed with SIGKILL. Each case asserts on the database
 * itself: the rows, the locks, and that no upstream session of the client is left (pg_stat_activity, polled
 * in a bounded loop); and that the guard still serves another client.
 */
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import {
  guardedDatabase,
  locksOf as locksOfApp,
  sessionsOf as sessionsOfApp,
  startGuardProcess,
  stopGuarded,
  tableOfRows,
} from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { execSql, postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';
import { connect, failure, streamOf } from '../../support/pgClients';

/** What the guard answers a raw socket until it closes it (bounded: 'open' if it never does). */
function rawExchange(
  port: number,
  chunks: Buffer[],
  options: { end?: boolean } = {},
): Promise<{ bytes: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      for (const chunk of chunks) socket.write(chunk);
      if (options.end) socket.end();
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ bytes: Buffer.concat(received), closed: false });
    }, 15_000);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ bytes: Buffer.concat(received), closed: true });
    });
  });
}

/** A start-up packet (protocol 3.0) with these parameters. */
function startupPacket(parameters: Record<string, string>): Buffer {
  const body = Buffer.concat([
    Buffer.from([0, 3, 0, 0]),
    ...Object.entries(parameters).map(([k, v]) => Buffer.from(`${k}\0${v}\0`)),
    Buffer.from([0]),
  ]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([length, body]);
}

describe.skipIf(!postgresAvailable)('pg-agent guard under bad input and faults', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;

  const sessionsOf = (application: string, gone = true) => sessionsOfApp(db.url, application, gone);
  const locksOf = (application: string) => locksOfApp(db.url, application);
  const values = async (): Promise<string> =>
    String(await queryValue(db.url, "SELECT string_agg(v, ',' ORDER BY id) FROM t"));
  /** Another client still reads through the guard. */
  const stillServes = async (target: GuardProcess = guard): Promise<void> => {
    const other = await connect(target.url, 'guard-fault-bystander');
    try {
      expect((await other.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 3 }]);
    } finally {
      await other.end();
    }
  };

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_fault', [tableOfRows(3)]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  describe('malformed protocol bytes from a raw socket', () => {
    it('closes a start-up packet of garbage, and one whose parameters have no end', async () => {
      const garbage = await rawExchange(guard.port, [Buffer.from([0, 0, 0, 12, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4])]);
      expect(garbage.closed).toBe(true);
      // Answered as PostgreSQL answers it, not dropped with a stack trace on the guard's stderr.
      expect(garbage.bytes.toString('latin1')).toContain('invalid startup packet');
      expect(garbage.bytes.toString('latin1')).toContain('08P01');
      expect(guard.stderr()).not.toContain('Unexpected initial message');
      const unterminated = startupPacket({ user: 'alice' }).subarray(0, -2);
      unterminated.writeInt32BE(unterminated.length);
      expect((await rawExchange(guard.port, [unterminated])).closed).toBe(true);
      await stillServes();
    });

    it("answers a GSSENCRequest with 'N' as a server without GSSAPI does, and the start-up goes on", async () => {
      const socket = net.connect({ host: '127.0.0.1', port: guard.port });
      socket.on('error', () => undefined);
      try {
        const received: Buffer[] = [];
        const until = (done: (bytes: Buffer) => boolean) =>
          new Promise<Buffer>((resolve, reject) => {
            const check = () => {
              const bytes = Buffer.concat(received);
              if (done(bytes)) resolve(bytes);
            };
            socket.on('data', (chunk: Buffer) => {
              received.push(chunk);
              check();
            });
            socket.once('close', () => reject(new Error(`closed after ${Buffer.concat(received).toString('latin1')}`)));
          });
        const gssenc = Buffer.alloc(8);
        gssenc.writeInt32BE(8);
        gssenc.writeInt32BE(80877104, 4);
        const refused = until((bytes) => bytes.length >= 1);
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        socket.write(gssenc);
        expect((await refused).toString('latin1')).toBe('N');
        received.length = 0;
        const sasl = until((bytes) => bytes.toString('latin1').includes('SCRAM-SHA-256'));
        socket.write(startupPacket({ user: 'alice', database: new URL(db.url).pathname.slice(1) }));
        expect((await sasl)[0]).toBe(0x52); // 'R': AuthenticationSASL, the guard asks for the password
      } finally {
        socket.destroy();
      }
      await stillServes();
    });

    it('refuses a start-up packet that declares a huge length before buffering it (08P01)', async () => {
      const header = Buffer.alloc(8);
      header.writeInt32BE(0x7ffffff0);
      header.writeInt32BE(196608, 4);
      const answer = await rawExchange(guard.port, [header, Buffer.alloc(128 * 1024, 0x61)]);
      expect(answer.closed).toBe(true);
      expect(answer.bytes.toString('latin1')).toContain('08P01');
      await stillServes();
    });

    it('closes an authenticated client that sends an unknown message type, or a huge declared length, with 08P01', async () => {
      for (const bytes of [
        Buffer.from([0x7a, 0, 0, 0, 4]),
        Buffer.concat([Buffer.from([0x51, 0x7f, 0xff, 0xff, 0xf0]), Buffer.alloc(40 * 1024 * 1024, 0x61)]),
      ]) {
        const client = await connect(guard.url, 'guard-fault-malformed');
        const failed = new Promise<Error>((resolve) => client.once('error', resolve));
        streamOf(client).write(bytes);
        const error = (await failed) as pg.DatabaseError;
        expect(error.code ?? error.message).toMatch(/08P01|Connection terminated/);
        expect(await sessionsOf('guard-fault-malformed')).toBe(0);
      }
      await stillServes();
    });

    it('ends the upstream session of a client that sends half a message and goes', async () => {
      const client = await connect(guard.url, 'guard-fault-truncated');
      expect(await sessionsOf('guard-fault-truncated', false)).toBe(1);
      const socket = streamOf(client);
      socket.end(Buffer.concat([Buffer.from([0x51, 0, 0, 0, 100]), Buffer.from('SELECT')]));
      expect(await sessionsOf('guard-fault-truncated')).toBe(0);
      await stillServes();
    });
  });

  describe('a client that disconnects', () => {
    it('mid-transaction after a measured write: no lock, no row, no session left', async () => {
      const client = await connect(guard.url, 'guard-fault-gone-tx');
      await client.query('BEGIN');
      expect((await client.query("UPDATE t SET v = 'gone' WHERE id = 1")).rowCount).toBe(1);
      expect(await locksOf('guard-fault-gone-tx')).toBeGreaterThan(0);
      streamOf(client).destroy();
      expect(await sessionsOf('guard-fault-gone-tx')).toBe(0);
      expect(await locksOf('guard-fault-gone-tx')).toBe(0);
      expect(await values()).toBe('v1,v2,v3');
      // The row it had locked is free: a direct write does not wait.
      await execSql(db.url, "SET lock_timeout = '5s'; UPDATE t SET v = 'v1' WHERE id = 1");
      await stillServes();
    });

    it('after its transaction was held at COMMIT, and while a held write is being answered', async () => {
      const client = await connect(guard.url, 'guard-fault-gone-held');
      await client.query('BEGIN');
      await client.query("UPDATE t SET v = 'held' WHERE id = 2");
      const held = await failure(client.query('COMMIT'));
      expect(held?.code).toBe('PA001');
      streamOf(client).destroy();
      expect(await sessionsOf('guard-fault-gone-held')).toBe(0);

      const second = await connect(guard.url, 'guard-fault-gone-held');
      void failure(second.query("UPDATE t SET v = 'held' WHERE id = 3"));
      streamOf(second).destroy();
      expect(await sessionsOf('guard-fault-gone-held')).toBe(0);
      expect(await locksOf('guard-fault-gone-held')).toBe(0);
      expect(await values()).toBe('v1,v2,v3');
      await stillServes();
    });
  });

  it('ends a client whose upstream session an administrator terminated (57P01), and serves the others', async () => {
    const client = await connect(guard.url, 'guard-fault-terminated');
    const ended = new Promise<Error>((resolve) => client.once('error', resolve));
    expect(
      await queryValue(
        db.url,
        "SELECT bool_and(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'guard-fault-terminated'",
      ),
    ).toBe(true);
    expect(((await ended) as pg.DatabaseError).code).toBe('57P01');
    expect(await failure(client.query('SELECT 1'))).toBeDefined();
    expect(await sessionsOf('guard-fault-terminated')).toBe(0);
    expect(guard.child.exitCode).toBeNull();
    await stillServes();
  });

  it('cancels a read running upstream (node-postgres cancel): 57014, and the connection goes on', async () => {
    const client = await connect(guard.url, 'guard-fault-cancel');
    try {
      const query = client.query('SELECT pg_sleep(30)');
      const cancelled = failure(query);
      const running =
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'guard-fault-cancel' AND state = 'active' AND query = 'SELECT pg_sleep(30)'";
      for (let i = 0; i < 200 && Number(await queryValue(db.url, running)) === 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      const canceller = new pg.Client({ connectionString: guard.url });
      (canceller as unknown as { cancel(client: pg.Client, query: unknown): void }).cancel(
        client,
        (client as unknown as { activeQuery: unknown }).activeQuery,
      );
      expect((await cancelled)?.code).toBe('57014');
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(Number(await queryValue(db.url, running))).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('answers a 10 MB statement sent with Parse, holds a 10 MB write, and serves another client meanwhile', async () => {
    const client = await connect(guard.url, 'guard-fault-big');
    const other = await connect(guard.url, 'guard-fault-big-other');
    try {
      const big = 'x'.repeat(10 * 1024 * 1024);
      const started = Date.now();
      let done = false;
      const read = client
        .query<{ n: number }>(`SELECT length('${big}') + $1::int AS n`, [1])
        .finally(() => (done = true));
      // Another client reads, one read after another, while the 10 MB one is sent and judged: each is
      // answered (the longest wait is reported, not asserted: it depends on the machine).
      let longest = 0;
      let reads = 0;
      while (!done && reads < 1000) {
        const asked = Date.now();
        expect((await other.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 3 }]);
        longest = Math.max(longest, Date.now() - asked);
        reads++;
      }
      expect((await read).rows).toEqual([{ n: big.length + 1 }]);
      console.log(
        `guard fault: 10 MB Parse+Bind read answered after ${Date.now() - started} ms; ${reads} reads beside it, the longest waited ${longest} ms`,
      );
      const held = await failure(client.query(`UPDATE t SET v = '${big}' WHERE id = $1`, [2]));
      expect(held?.code).toBe('PA001');
      expect(await values()).toBe('v1,v2,v3');
    } finally {
      await client.end();
      await other.end();
    }
  }, 120_000);

  it('Ctrl+C stops the guard at once with a client still in start-up and one waiting on a held statement', async () => {
    const stopping = await startGuardProcess(db.url, { user: 'frank', args: ['--hold', 'wait=600'] });
    // Connected and silent: not a client yet (the start-up timeout is a minute away).
    const silent = net.connect({ host: '127.0.0.1', port: stopping.port });
    silent.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => silent.once('close', () => resolve()));
    const waiter = await connect(stopping.url, 'guard-fault-stop-wait');
    const waited = failure(waiter.query("UPDATE t SET v = 'never' WHERE id = 2"));
    await expect
      .poll(
        () => readdirSync(join(stopping.workspace, '.pgagent', 'approvals')).filter((n) => n.endsWith('.json')).length,
        { timeout: 20_000 },
      )
      .toBeGreaterThan(0);
    // stop() fails if the process is still there 30 s after SIGINT.
    await stopping.stop();
    await closed;
    expect((await waited)?.message).toMatch(/Connection terminated|terminat/i);
    expect(await sessionsOf('guard-fault-stop-wait')).toBe(0);
    expect(await values()).toBe('v1,v2,v3');
  });

  describe('a guard killed with SIGKILL', () => {
    it('mid-transaction after a measured write: nothing committed, no session, no lock', async () => {
      const doomed = await startGuardProcess(db.url, { user: 'carol' });
      const client = await connect(doomed.url, 'guard-fault-killed-tx');
      await client.query('BEGIN');
      await client.query("UPDATE t SET v = 'killed' WHERE id = 1");
      expect(await locksOf('guard-fault-killed-tx')).toBeGreaterThan(0);
      await doomed.kill();
      expect(await sessionsOf('guard-fault-killed-tx')).toBe(0);
      expect(await locksOf('guard-fault-killed-tx')).toBe(0);
      expect(await values()).toBe('v1,v2,v3');
      await stillServes();
    });

    it('while a held statement awaits: the restarted guard finds the same ticket, and the approved retry runs once', async () => {
      const doomed = await startGuardProcess(db.url, { user: 'dave' });
      const client = await connect(doomed.url, 'guard-fault-killed-held');
      const held = await failure(client.query("UPDATE t SET v = 'approved' WHERE id = 3"));
      const ticket = ticketIn(held?.message ?? '');
      expect(held?.code).toBe('PA001');
      await doomed.kill();
      expect(await sessionsOf('guard-fault-killed-held')).toBe(0);
      const approvals = join(doomed.workspace, '.pgagent', 'approvals');
      const file = join(approvals, `${ticket}.json`);
      expect((JSON.parse(readFileSync(file, 'utf8')) as { status: string }).status).toBe('PENDING_APPROVAL');
      // Every ticket file the killed guard left is whole (atomic writes: no half file, no stray temp file).
      for (const name of readdirSync(approvals).filter((n) => n.endsWith('.json')))
        expect(() => JSON.parse(readFileSync(join(approvals, name), 'utf8')) as unknown).not.toThrow();
      expect(readdirSync(approvals).filter((n) => n.endsWith('.tmp'))).toEqual([]);

      const restarted = await startGuardProcess(db.url, { user: 'erin', workspace: doomed.workspace });
      const again = await connect(restarted.url, 'guard-fault-killed-held');
      try {
        const waiting = await failure(again.query("UPDATE t SET v = 'approved' WHERE id = 3"));
        expect(ticketIn(waiting?.message ?? '')).toBe(ticket);
        expect(waiting?.message).toContain('still waiting');
        expect((await restarted.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
        expect((await again.query("UPDATE t SET v = 'approved' WHERE id = 3")).rowCount).toBe(1);
        expect(await values()).toBe('v1,v2,approved');
        const later = await failure(again.query("UPDATE t SET v = 'approved' WHERE id = 3"));
        expect(later?.code).toBe('PA001');
        expect(ticketIn(later?.message ?? '')).not.toBe(ticket);
        expect((JSON.parse(readFileSync(file, 'utf8')) as { status: string }).status).toBe('EXECUTED');
      } finally {
        await again.end();
        await restarted.stop();
        await execSql(db.url, "UPDATE t SET v = 'v3' WHERE id = 3");
      }
    });
  });
});

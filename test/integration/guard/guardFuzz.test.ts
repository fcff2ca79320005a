/**
 * Malformed input never takes the guard down: a bounded protocol fuzz from authenticated clients (a seeded
 * generator, so a failure replays): lengths mutated (tiny, negative, huge, off by a few), messages cut short
 * then the socket closed, unknown message types, NULs inside strings, Parse/Bind with lying counts, and random
 * bytes, in bursts on hundreds of connections. An error on one client's path closes that client, never the
 * guard: it stays up, a fresh client reads, and nothing was written.
 */
import type { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { generator } from '../../support/seededRandom';

const CONNECTIONS = 200;
const SEED = Number(process.env.GUARD_FUZZ_SEED ?? 38);

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');
const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};

const VALID: Buffer[] = [
  message('Q', cstring('SELECT 1')),
  message('Q', cstring('DELETE FROM victims')),
  message('P', Buffer.concat([cstring(''), cstring('SELECT $1::int'), int16(1), Buffer.from([0, 0, 0, 23])])),
  message(
    'B',
    Buffer.concat([cstring(''), cstring(''), int16(0), int16(1), Buffer.from([0, 0, 0, 1, 0x37]), int16(0)]),
  ),
  message('E', Buffer.concat([cstring(''), Buffer.alloc(4)])),
  message('D', Buffer.concat([Buffer.from('S'), cstring('')])),
  message('C', Buffer.concat([Buffer.from('P'), cstring('x')])),
  message('S', Buffer.alloc(0)),
  message('H', Buffer.alloc(0)),
  message('d', Buffer.from('1\tone\n')),
  message('c', Buffer.alloc(0)),
];

function fuzzed(random: () => number): { bytes: Buffer; last: boolean } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const base = Buffer.from(pick(VALID));
  switch (Math.floor(random() * 7)) {
    case 0: {
      // The length mutated: tiny, negative, huge, or off by a few.
      base.writeUInt32BE(
        pick([0, 1, 3, 0xffffffff, 0x7fffffff, 0x80000000, base.length + 3, base.length - 6].map((n) => n >>> 0)),
        1,
      );
      return { bytes: base, last: true };
    }
    case 1:
      // Cut short, then the socket closes.
      return { bytes: base.subarray(0, Math.floor(random() * base.length)), last: true };
    case 2:
      // An unknown type.
      base[0] = pick([0, 0x01, 0x7f, 0xff, 0x41, 0x5a, 0x70]);
      return { bytes: base, last: false };
    case 3: {
      // A NUL inside its text.
      const at = 5 + Math.floor(random() * Math.max(1, base.length - 5));
      if (at < base.length) base[at] = 0;
      return { bytes: base, last: false };
    }
    case 4: {
      // A byte of its body flipped (counts, formats, lengths inside Parse/Bind).
      const at = 5 + Math.floor(random() * Math.max(1, base.length - 5));
      if (at < base.length) base[at] = Math.floor(random() * 256);
      return { bytes: base, last: false };
    }
    case 5: {
      const junk = Buffer.alloc(1 + Math.floor(random() * 64));
      for (let i = 0; i < junk.length; i++) junk[i] = Math.floor(random() * 256);
      return { bytes: junk, last: true };
    }
    default:
      return { bytes: base, last: false };
  }
}

describe.skipIf(!postgresAvailable)('pg-agent guard under a bounded protocol fuzz', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_i38_fuzz', [
      'CREATE TABLE victims (id int); INSERT INTO victims VALUES (1), (2);',
    ]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  async function readsThrough(): Promise<number> {
    const client = new pg.Client({ connectionString: guard.url });
    await client.connect();
    try {
      return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM victims')).rows[0]!.n);
    } finally {
      await client.end();
    }
  }

  it(`survives ${CONNECTIONS} connections of mutated messages (seed ${SEED}), closing only those clients`, async () => {
    const random = generator(SEED);
    let sent = 0;
    for (let c = 0; c < CONNECTIONS; c++) {
      const client = new pg.Client({ connectionString: guard.url });
      client.on('error', () => undefined);
      await client.connect();
      const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const burst = 1 + Math.floor(random() * 40);
      for (let i = 0; i < burst && !socket.destroyed; i++) {
        const { bytes, last } = fuzzed(random);
        socket.write(bytes);
        sent++;
        if (last) break;
      }
      // The guard's answer (or its close) has a moment to come; then this client leaves.
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 20))]);
      socket.destroy();
      if (c % 50 === 49) {
        expect(guard.child.exitCode, guard.stderr()).toBeNull();
        expect(await readsThrough()).toBe(2);
      }
    }
    expect(sent).toBeGreaterThan(CONNECTIONS);
    expect(guard.child.exitCode, guard.stderr()).toBeNull();
    expect(await readsThrough()).toBe(2);
    // Nothing was written by any of it.
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM victims'))).toBe(2);
  }, 240_000);
});

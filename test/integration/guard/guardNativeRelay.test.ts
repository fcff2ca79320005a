/**
 * The native relay (session/nativeRelay.ts, native/guardRelay) in a real guard, tested as an attacker would: once a
 * client's read has passed from the verdict cache, the relay's thread holds its sockets and forwards what it
 * knows; a write hidden after a passed read in one packet (one in a READ WRITE transaction of its own, which the
 * read-only upstream session would not stop), or inside an extended batch of passed reads, cut into
 * two writes at every byte boundary, is still held (the table says so, not only the answers), and mutated frames
 * sent while the relay holds the sockets close that client at most, never the guard. Skipped when the addon is
 * not built (npm run build builds it).
 */
import type net from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDON_FILE, loadAddon } from '../../../src/guard/session/nativeRelay';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { connect, streamOf } from '../../support/pgClients';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { generator } from '../../support/seededRandom';
import { Answers } from '../../support/wireAnswers';

/** The addon `npm run build` made (the guard it starts loads it from beside dist/cli.js). */
const BUILT_ADDON = fileURLToPath(new URL(`../../../dist/${ADDON_FILE}`, import.meta.url));

const READ = (id: number) => `SELECT qty FROM item WHERE id = ${id}`;
const WRITE = 'UPDATE item SET qty = qty + 1 WHERE id = 1';
// Its own READ WRITE transaction: were it ever forwarded, the read-only upstream session would not stop it.
const READ_WRITE = 'BEGIN READ WRITE; UPDATE item SET qty = qty + 1 WHERE id = 1; COMMIT';
const READ_EXTENDED = 'SELECT qty FROM item WHERE id = $1';
const WRITE_EXTENDED = 'UPDATE item SET qty = qty + 1 WHERE id = $1';

const SIMPLE_READ = ['rowDescription', 'row 0', 'commandComplete', 'readyForQuery'];
const SIMPLE_HELD = ['error PA001', 'readyForQuery'];
const SIMPLE_REFUSED = ['error PA002', 'readyForQuery'];
const EXTENDED_READ = ['parseComplete', 'bindComplete', 'rowDescription', 'row 0', 'commandComplete', 'readyForQuery'];
const EXTENDED_HELD = ['parseComplete', 'bindComplete', 'noData', 'error PA001', 'readyForQuery'];

/** Parse (unnamed), Bind with `id`, Describe, Execute; and Sync unless `sync` is false. */
const unnamed = (sql: string, id: string, sync = true): Buffer =>
  Buffer.concat([
    serialize.parse({ text: sql, name: '' }),
    serialize.bind({ values: [id] }),
    serialize.describe({ type: 'P', name: '' }),
    serialize.execute({}),
    ...(sync ? [serialize.sync()] : []),
  ]);

const gaveBack = (guard: GuardProcess): number[] =>
  [...guard.stderr().matchAll(/guard native relay gave a session back .*forwarded=(\d+)/g)].map((m) => Number(m[1]));

// Under CI the addon must be there (npm run build builds it): the suite runs and fails without it.
const built = loadAddon(BUILT_ADDON).addon !== undefined;
if (!built && process.env.CI !== 'true')
  console.warn('!!! guardNativeRelay skipped: dist/guardRelay.node is not built (npm run build builds it)');

describe.skipIf(!postgresAvailable || (!built && process.env.CI !== 'true'))("the guard's native relay", () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase(
      'pgagent_guard_native',
      [
        'CREATE TABLE item (id int PRIMARY KEY, qty int NOT NULL); INSERT INTO item SELECT g, 0 FROM generate_series(1, 5) g;',
      ],
      { args: ['-v'], env: { PGAGENT_GUARD_NATIVE: '1' } },
    ));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  const unchanged = async () => expect(await queryValue(db.url, 'SELECT sum(qty) FROM item')).toBe('0');

  /** A client whose reads passed (judged, then from the verdict cache: the relay may take its sockets), raw. */
  async function warmed(extended: boolean): Promise<{ client: pg.Client; socket: net.Socket }> {
    const client = await connect(guard.url, 'guard-native');
    for (let i = 0; i < 3; i++)
      expect((await (extended ? client.query(READ_EXTENDED, [2]) : client.query(READ(2)))).rows).toEqual([{ qty: 0 }]);
    return { client, socket: streamOf(client) };
  }

  it('is the path in use, and forwards passed reads itself', async () => {
    const before = gaveBack(guard).length;
    const { client } = await warmed(false);
    expect(guard.stderr()).toContain('guard hot path: native relay');
    for (let i = 1; i <= 50; i++) expect((await client.query(READ(1 + (i % 5)))).rows).toEqual([{ qty: 0 }]);
    await client.end();
    await expect.poll(() => gaveBack(guard).length).toBeGreaterThan(before);
    expect(
      gaveBack(guard)
        .slice(before)
        .reduce((a, b) => a + b, 0),
    ).toBeGreaterThan(0);
  });

  it('writes after a passed read in one packet, cut at every byte boundary, are held or refused each time', async () => {
    const before = gaveBack(guard).length;
    const { client, socket } = await warmed(false);
    const answers = new Answers(socket);
    const packet = Buffer.concat([
      serialize.query(READ(3)),
      serialize.query(WRITE),
      serialize.query(READ_WRITE),
      serialize.query(READ(4)),
    ]);
    for (let cut = 1; cut < packet.length; cut++) {
      socket.write(packet.subarray(0, cut));
      // The first part reaches the guard on its own (TCP_NODELAY: each write its own segment) before the rest.
      await new Promise((resolve) => setTimeout(resolve, 2));
      socket.write(packet.subarray(cut));
      expect(await answers.until(4), `cut at byte ${cut}`).toEqual([
        ...SIMPLE_READ,
        ...SIMPLE_HELD,
        ...SIMPLE_REFUSED,
        ...SIMPLE_READ,
      ]);
      // A passed read on its own between cuts: the relay takes the sockets again.
      socket.write(serialize.query(READ(5)));
      expect(await answers.until(1)).toEqual(SIMPLE_READ);
    }
    // The relay held the sockets and gave them back at each write: the writes met the judged path.
    expect(gaveBack(guard).length - before).toBeGreaterThanOrEqual(packet.length - 1);
    socket.destroy();
    await client.end().catch(() => undefined);
    await unchanged();
  }, 240_000);

  it('a write inside an extended batch of passed reads, cut at every byte boundary, is held each time', async () => {
    const before = gaveBack(guard).length;
    const { client, socket } = await warmed(true);
    const answers = new Answers(socket);
    // A batch of a read (the relay forwards it and still owes its answers when the next batch comes back to the
    // guard), one batch of a read, the write and a read with one Sync, then a batch of a read alone.
    const packet = Buffer.concat([
      unnamed(READ_EXTENDED, '2'),
      unnamed(READ_EXTENDED, '3', false),
      unnamed(WRITE_EXTENDED, '1', false),
      unnamed(READ_EXTENDED, '4'),
      unnamed(READ_EXTENDED, '5'),
    ]);
    const expected = [...EXTENDED_READ, ...EXTENDED_READ.slice(0, -1), ...EXTENDED_HELD, ...EXTENDED_READ];
    for (let cut = 1; cut < packet.length; cut += 1) {
      socket.write(packet.subarray(0, cut));
      await new Promise((resolve) => setTimeout(resolve, 2));
      socket.write(packet.subarray(cut));
      expect(await answers.until(3), `cut at byte ${cut}`).toEqual(expected);
    }
    expect(gaveBack(guard).length - before).toBeGreaterThanOrEqual(packet.length - 2);
    socket.destroy();
    await client.end().catch(() => undefined);
    await unchanged();
  }, 480_000);

  it('mutated frames sent while the relay holds the sockets close that client at most; nothing is written', async () => {
    const random = generator(Number(process.env.GUARD_FUZZ_SEED ?? 38));
    const valid = [
      serialize.query(READ(1)),
      serialize.query(WRITE),
      unnamed(READ_EXTENDED, '1'),
      unnamed(WRITE_EXTENDED, '1'),
      serialize.parse({ text: READ_EXTENDED, name: '' }),
      serialize.bind({ values: ['1'] }),
      serialize.describe({ type: 'P', name: '' }),
      serialize.execute({}),
      serialize.sync(),
    ];
    const before = gaveBack(guard).length;
    for (let c = 0; c < 60; c++) {
      const { client, socket } = await warmed(c % 2 === 1);
      client.on('error', () => undefined);
      socket.on('error', () => undefined);
      socket.removeAllListeners('data');
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      for (let i = 0; i < 20 && !socket.destroyed; i++) {
        const bytes = Buffer.from(valid[Math.floor(random() * valid.length)]!);
        const at = 5 + Math.floor(random() * Math.max(1, bytes.length - 5));
        switch (Math.floor(random() * 5)) {
          case 0:
            bytes.writeUInt32BE([0, 3, 0xffffffff, 0x7fffffff, bytes.length + 3, bytes.length - 6][i % 6]! >>> 0, 1);
            break;
          case 1:
            if (at < bytes.length) bytes[at] = Math.floor(random() * 256);
            break;
          case 2:
            if (at < bytes.length) bytes[at] = 0;
            break;
          case 3:
            bytes[0] = Math.floor(random() * 256);
            break;
          default:
            break;
        }
        // Sent in pieces at random places.
        const cut = Math.floor(random() * bytes.length);
        socket.write(bytes.subarray(0, cut));
        socket.write(bytes.subarray(cut));
      }
      socket.end();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 500))]);
      socket.destroy();
    }
    const check = new pg.Client({ connectionString: guard.url });
    await check.connect();
    expect((await check.query(READ(1))).rows).toEqual([{ qty: 0 }]);
    await check.end();
    expect(gaveBack(guard).length).toBeGreaterThan(before);
    await unchanged();
  }, 240_000);
});

/**
 * The extended protocol's fast path (session/extendedProtocol.ts `fast`): a read's Parse judged before, and the
 * Bind, Describe, Execute, Close and Sync that only forward, go upstream without an async turn. It must pass
 * nothing the judged path would not: a write sent in the same pipeline as known reads (one socket write, so one
 * chunk the guard cuts), a write's named statement bound again and again between reads, a read's unnamed
 * statement replaced by a write, and a pipeline cut into two writes at every byte boundary: each time the reads
 * answer in order, every write is held (PA001), and the table is unchanged.
 */
import type net from 'node:net';
import type pg from 'pg';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import { connect, failure, streamOf } from '../../support/pgClients';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { Answers } from '../../support/wireAnswers';

const READ = 'SELECT qty FROM item WHERE id = $1';
const WRITE = 'UPDATE item SET qty = qty + 1 WHERE id = $1';

/** Parse (unnamed), Bind with `id`, Describe, Execute, Sync. */
const unnamed = (sql: string, id: string): Buffer =>
  Buffer.concat([
    serialize.parse({ text: sql, name: '' }),
    serialize.bind({ values: [id] }),
    serialize.describe({ type: 'P', name: '' }),
    serialize.execute({}),
    serialize.sync(),
  ]);

const READ_ANSWER = ['parseComplete', 'bindComplete', 'rowDescription', 'row 0', 'commandComplete', 'readyForQuery'];
const HELD_ANSWER = ['parseComplete', 'bindComplete', 'noData', 'error PA001', 'readyForQuery'];

describe.skipIf(!postgresAvailable)("the guard's extended-protocol fast path", () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guardfast_ext', [
      'CREATE TABLE item (id int PRIMARY KEY, qty int NOT NULL); INSERT INTO item SELECT g, 0 FROM generate_series(1, 5) g;',
    ]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  const unchanged = async () => expect(await queryValue(db.url, 'SELECT sum(qty) FROM item')).toBe('0');

  /** A client whose read went through once (judged: its Parse is known from then on), and its raw socket. */
  async function warmed(): Promise<{ client: pg.Client; socket: net.Socket }> {
    const client = await connect(guard.url, 'guardfast-ext');
    expect((await client.query<{ qty: number }>(READ, [1])).rows).toEqual([{ qty: 0 }]);
    return { client, socket: streamOf(client) };
  }

  it('a write in one pipeline with known reads is held; the reads answer in order', async () => {
    const { client, socket } = await warmed();
    const answers = new Answers(socket);
    socket.write(Buffer.concat([unnamed(READ, '1'), unnamed(WRITE, '1'), unnamed(READ, '2')]));
    expect(await answers.until(3)).toEqual([...READ_ANSWER, ...HELD_ANSWER, ...READ_ANSWER]);
    socket.write(Buffer.concat([unnamed(READ, '3'), unnamed(READ, '4')]));
    expect(await answers.until(2)).toEqual([...READ_ANSWER, ...READ_ANSWER]);
    socket.destroy();
    await client.end().catch(() => undefined);
    await unchanged();
  });

  it("a write's named statement is held at each Execute, between reads that pass", async () => {
    const client = await connect(guard.url, 'guardfast-ext');
    try {
      for (let i = 0; i < 3; i++) {
        expect((await client.query<{ qty: number }>({ name: 'r', text: READ, values: [2] })).rows).toEqual([
          { qty: 0 },
        ]);
        expect((await failure(client.query({ name: 'w', text: WRITE, values: [2] })))?.code).toBe('PA001');
      }
    } finally {
      await client.end();
    }
    await unchanged();
  });

  it('a pipeline cut into two writes at every byte boundary: the same answers each time', async () => {
    const { client, socket } = await warmed();
    const answers = new Answers(socket);
    const pipeline = Buffer.concat([unnamed(READ, '1'), unnamed(WRITE, '1'), unnamed(READ, '5')]);
    for (let cut = 1; cut < pipeline.length; cut++) {
      socket.write(pipeline.subarray(0, cut));
      // The first part reaches the guard on its own (TCP_NODELAY: each write its own segment) before the rest.
      await new Promise((resolve) => setTimeout(resolve, 2));
      socket.write(pipeline.subarray(cut));
      expect(await answers.until(3), `cut at byte ${cut}`).toEqual([...READ_ANSWER, ...HELD_ANSWER, ...READ_ANSWER]);
    }
    socket.destroy();
    await client.end().catch(() => undefined);
    await unchanged();
  }, 240_000);
});

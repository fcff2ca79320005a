// The sample database in a worker thread, as the extension host opens it: the built worker
// (dist/sampleDbWorker.js) restoring the built image, answering like the in-thread database (rows, text
// form, PostgreSQL's errors, sessions kept apart), leaving the host's thread free while a statement runs,
// and failing clearly when the worker is gone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../../src/core/db/db';
import { DbQueryError } from '../../../../src/core/db/dbErrors';
import { openSampleDb, SAMPLE_DB_LABEL } from '../../../../src/core/db/sample/openSampleDb';
import { SAMPLE_ROW_COUNTS } from '../../../../src/core/db/sample/sampleData';
import { openSampleDbInWorker } from '../../../../src/core/db/sample/sampleDbInWorker';
import { AgentError } from '../../../../src/core/platform/errors';
import type { Logger } from '../../../../src/core/platform/logger';
import { silentLogger } from '../../../../src/core/platform/logger';
import { recordingLogger } from '../../../support/recordingLogger';

const SLOW = { timeout: 120_000 };
const WORKER = path.resolve('dist', 'sampleDbWorker.js');
const IMAGE = path.resolve('dist', 'sample-db.tar.gz');

const tempRoots: string[] = [];
const openDbs: Db[] = [];

beforeAll(() => {
  for (const file of [WORKER, IMAGE]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does).`);
  }
});

afterEach(async () => {
  for (const db of openDbs.splice(0)) await db.close();
  for (const root of tempRoots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function tempDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-sample-worker-'));
  tempRoots.push(root);
  return root;
}

async function inWorker(dataDir: string, logger: Logger = silentLogger, onProgress?: (m: string) => void): Promise<Db> {
  const db = await openSampleDbInWorker({
    dataDir,
    logger,
    imageFile: IMAGE,
    workerScript: WORKER,
    ...(onProgress ? { onProgress } : {}),
  });
  openDbs.push(db);
  return db;
}

async function failure(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('the sample database in a worker thread', () => {
  it(
    'opens from the shipped image with progress and logs in the host, and answers as the in-thread database does',
    SLOW,
    async () => {
      const dataDir = path.join(tempDir(), 'sample-db');
      const logger = recordingLogger();
      const progress: string[] = [];
      const db = await inWorker(dataDir, logger, (m) => progress.push(m));
      expect(db.label).toBe(SAMPLE_DB_LABEL);
      expect(db.kind).toBe('pglite');
      expect(progress).toContain('Creating the sample database…');
      expect(logger.messages()).toEqual(
        expect.arrayContaining(['sample database: restored from the shipped image', 'sample database: ready']),
      );

      const counts = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
      expect(counts.rows[0]?.n).toBe(SAMPLE_ROW_COUNTS.orders);

      // Values keep their JS types across the thread boundary (dates as Date), and the text form is PostgreSQL's.
      const sql = 'SELECT id, created_at, total FROM orders ORDER BY id LIMIT 3';
      const viaWorker = await db.query(sql);
      const viaText = await db.queryText(sql);
      await db.close();
      openDbs.splice(openDbs.indexOf(db), 1);
      const inThread = await openSampleDb({ dataDir, logger: silentLogger });
      try {
        expect(viaWorker.rows).toEqual((await inThread.query(sql)).rows);
        expect(viaWorker.rows[0]?.created_at).toBeInstanceOf(Date);
        expect(viaText).toEqual(await inThread.queryText(sql));
        expect(viaWorker.fields).toEqual((await inThread.query(sql)).fields);
      } finally {
        await inThread.close();
      }
    },
  );

  it(
    'two first opens at once in two workers of one process leave one whole database and no leftovers',
    SLOW,
    async () => {
      const dataDir = path.join(tempDir(), 'sample-db');
      // Each builds in its own staging folder (the two threads share a pid) and one is moved into place. PGlite
      // allows one instance per folder: the second to open it may be refused, and then says so.
      const opened = await Promise.allSettled([inWorker(dataDir), inWorker(dataDir)]);
      expect(opened.some((o) => o.status === 'fulfilled')).toBe(true);
      for (const o of opened) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'SAMPLE_DB_FAILED' });
      for (const db of openDbs.splice(0)) await db.close();
      expect(fs.readdirSync(path.dirname(dataDir))).toEqual(['sample-db']);
      const again = await inWorker(dataDir);
      expect((await again.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n).toBe(
        SAMPLE_ROW_COUNTS.orders,
      );
    },
  );

  it("gives PostgreSQL's error with its SQLSTATE and position, and goes on answering", SLOW, async () => {
    const db = await inWorker(path.join(tempDir(), 'sample-db'));
    const error = await failure(db.query('SELECT no_such_column FROM orders'));
    expect(error).toBeInstanceOf(DbQueryError);
    expect(error).toMatchObject({ code: 'DB_QUERY_FAILED', sqlState: '42703', position: 8 });
    expect((error as Error).message).toMatch(/no_such_column/);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it("keeps a session's transaction to itself: a statement from outside waits for it", SLOW, async () => {
    const db = await inWorker(path.join(tempDir(), 'sample-db'));
    const seen: string[] = [];
    let outside: Promise<unknown> | undefined;
    await db.withSession(async (session) => {
      await session.query('BEGIN');
      await session.query("INSERT INTO categories (name, slug) VALUES ('worker-session', 'worker-session')");
      // Sent while the transaction is open: it must not run inside it, nor see its row before the commit.
      outside = db
        .query<{ n: number }>("SELECT count(*)::int AS n FROM categories WHERE name = 'worker-session'")
        .then((r) => seen.push(`outside saw ${r.rows[0]?.n}`));
      await session.query('ROLLBACK');
      seen.push('session ended');
    });
    await outside;
    expect(seen).toEqual(['session ended', 'outside saw 0']);
  });

  it("leaves the host's thread free while a long statement runs", SLOW, async () => {
    const db = await inWorker(path.join(tempDir(), 'sample-db'));
    const order: string[] = [];
    const statement = db
      .query('SELECT count(*) FROM generate_series(1, 3000000) g, LATERAL (SELECT md5(g::text)) m')
      .then(() => order.push('statement done'));
    // A timer set after the statement was sent: the host's event loop turns while the worker works.
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('host timer');
        resolve();
      }, 1),
    );
    await statement;
    expect(order).toEqual(['host timer', 'statement done']);
  });

  it(
    'fails clearly when the folder is not a database, leaving it untouched (the error crosses the thread)',
    SLOW,
    async () => {
      const dataDir = path.join(tempDir(), 'sample-db');
      fs.mkdirSync(dataDir);
      fs.writeFileSync(path.join(dataDir, 'notes.txt'), 'keep me');
      const error = await failure(inWorker(dataDir));
      expect(error).toBeInstanceOf(AgentError);
      expect(error).toMatchObject({ code: 'SAMPLE_DB_FAILED' });
      expect((error as AgentError).message).toMatch(/does not hold a PostgreSQL database/);
      expect((error as AgentError).advice).toBeTruthy();
      expect(fs.readFileSync(path.join(dataDir, 'notes.txt'), 'utf8')).toBe('keep me');
    },
  );

  it('rejects the statement in flight and every later one when the worker dies, and says so', SLOW, async () => {
    // A worker that opens nothing, says it is ready, and dies on the first statement it gets.
    const script = path.join(tempDir(), 'dyingWorker.js');
    fs.writeFileSync(
      script,
      "const { parentPort } = require('node:worker_threads');\nparentPort.postMessage({ op: 'ready' });\nparentPort.on('message', () => process.exit(7));\n",
    );
    const logger = recordingLogger();
    const db = await openSampleDbInWorker({ dataDir: path.join(tempDir(), 'sample-db'), logger, workerScript: script });
    const inFlight = await failure(db.query('SELECT 1'));
    expect(inFlight).toBeInstanceOf(AgentError);
    expect(inFlight).toMatchObject({
      code: 'SAMPLE_DB_FAILED',
      message: 'The sample database stopped: its worker exited with code 7.',
    });
    expect((inFlight as AgentError).advice).toMatch(/Open the sample database again/);
    expect(await failure(db.query('SELECT 2'))).toBe(inFlight);
    await db.close();
  });

  it('after close, a statement is refused with why', SLOW, async () => {
    const db = await inWorker(path.join(tempDir(), 'sample-db'));
    await db.close();
    openDbs.splice(openDbs.indexOf(db), 1);
    expect(await failure(db.query('SELECT 1'))).toMatchObject({
      code: 'SAMPLE_DB_FAILED',
      message: 'The sample database stopped: it was closed.',
    });
  });
});

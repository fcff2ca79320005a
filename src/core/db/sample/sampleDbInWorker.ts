/**
 * The sample database in a worker thread, as a Db: PGlite (PostgreSQL compiled to WASM) runs statements
 * synchronously on the thread that owns it, so in the extension host a first open or a long preview would
 * freeze every editor, CodeLens and view until it finished. Here the worker owns it and the host only
 * posts statements and awaits answers; the Db behaves as openSampleDb's in-thread one does (same errors,
 * sessions held exclusively, statements in order).
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { AgentError } from '../../platform/errors';
import { OneAtATime } from '../oneAtATime';
import type { Db, DbResult, DbSession, DbTextResult } from '../db';
import { withOnlySession } from '../sessionReset';
import { SAMPLE_DB_LABEL, type OpenSampleDbOptions } from './openSampleDb';
import { fromWorkerError, type HostToWorker, type SampleWorkerData, type WorkerToHost } from './sampleDbWorkerProtocol';

/** The worker's bundle, beside this code's (dist/ in the extension and the CLI). */
export const SAMPLE_DB_WORKER_FILE = 'sampleDbWorker.js';

export interface OpenSampleDbInWorkerOptions extends OpenSampleDbOptions {
  /** The worker's script; default SAMPLE_DB_WORKER_FILE beside this code. */
  workerScript?: string;
}

export function openSampleDbInWorker(options: OpenSampleDbInWorkerOptions): Promise<Db> {
  const data: SampleWorkerData = {
    dataDir: path.resolve(options.dataDir),
    ...(options.imageFile !== undefined ? { imageFile: options.imageFile } : {}),
  };
  const worker = new Worker(options.workerScript ?? path.join(__dirname, SAMPLE_DB_WORKER_FILE), { workerData: data });
  const db = new WorkerDb(worker, options);
  return db.opened.then(() => db);
}

interface Pending {
  resolve: (result: DbResult | DbTextResult) => void;
  reject: (error: unknown) => void;
}

class WorkerDb implements Db {
  readonly kind = 'pglite' as const;
  readonly label = SAMPLE_DB_LABEL;
  /** Settles when the worker has opened the database (rejects with why it could not). */
  readonly opened: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Why the worker is gone, once it is: every later statement fails with it. */
  private gone: AgentError | undefined;
  private readonly exited: Promise<void>;
  /** close() was called: the worker's exit is the expected end. */
  private closing = false;
  private readonly queue = new OneAtATime();
  private readonly session: DbSession = {
    query: <Row>(sql: string, params?: readonly unknown[]) => this.send('query', sql, params) as Promise<DbResult<Row>>,
    queryText: (sql: string, params?: readonly unknown[]) =>
      this.send('queryText', sql, params) as Promise<DbTextResult>,
  };

  constructor(
    private readonly worker: Worker,
    options: OpenSampleDbOptions,
  ) {
    const { logger } = options;
    let settleOpen: { resolve: () => void; reject: (error: unknown) => void } | undefined;
    this.opened = new Promise<void>((resolve, reject) => {
      settleOpen = { resolve, reject };
    });
    worker.on('message', (message: WorkerToHost) => {
      switch (message.op) {
        case 'log':
          logger[message.level](message.message, message.fields);
          return;
        case 'progress':
          options.onProgress?.(message.message);
          return;
        case 'ready':
          settleOpen?.resolve();
          return;
        case 'openFailed':
          settleOpen?.reject(fromWorkerError(message.error));
          void worker.terminate();
          return;
        case 'result':
        case 'failed': {
          const waiting = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.op === 'result') waiting?.resolve(message.result);
          else waiting?.reject(fromWorkerError(message.error));
          return;
        }
        case 'closed':
          // PGlite is closed: end the thread now rather than wait for its event loop to drain.
          void worker.terminate();
          return;
      }
    });
    const stop = (why: string): void => {
      this.gone ??= new AgentError(
        'SAMPLE_DB_FAILED',
        `The sample database stopped: ${why}.`,
        'Open the sample database again (Postgres Agent: Open Sample Database, or --db sample).',
      );
      settleOpen?.reject(this.gone);
      for (const waiting of this.pending.values()) waiting.reject(this.gone);
      this.pending.clear();
    };
    worker.on('error', (error) => {
      logger.error('sample database: its worker failed', { error: error.message });
      stop(error.message);
    });
    this.exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        stop(this.closing ? 'it was closed' : `its worker exited with code ${code}`);
        resolve();
      });
    });
  }

  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<DbResult<Row>> {
    return this.queue.run(() => this.session.query<Row>(sql, params));
  }

  queryText(sql: string, params?: readonly unknown[]): Promise<DbTextResult> {
    return this.queue.run(() => this.session.queryText(sql, params));
  }

  /** One connection, as with PgliteDb: a session holds it so no other statement lands inside its transaction. */
  withSession<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    return withOnlySession(this.queue, this.session, work);
  }

  async close(): Promise<void> {
    await this.queue.idle();
    if (this.gone) return;
    this.closing = true;
    this.worker.postMessage({ id: 0, op: 'close' } satisfies HostToWorker);
    await this.exited;
  }

  private send(
    op: 'query' | 'queryText',
    sql: string,
    params: readonly unknown[] | undefined,
  ): Promise<DbResult | DbTextResult> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, sql, ...(params ? { params: [...params] } : {}) } satisfies HostToWorker);
    });
  }
}

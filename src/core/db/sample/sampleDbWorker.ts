// The worker thread that owns the sample database (bundled as dist/sampleDbWorker.js): it opens it with
// openSampleDb (restore or generate, in this thread) and then answers the host's statements in order.
// Logs and progress go to the host, which writes them where it writes its own.
import { parentPort, workerData } from 'node:worker_threads';
import type { LogFields, Logger } from '../../platform/logger';
import type { Db } from '../db';
import { openSampleDb } from './openSampleDb';
import { toWorkerError, type HostToWorker, type SampleWorkerData, type WorkerToHost } from './sampleDbWorkerProtocol';

if (!parentPort) throw new Error('sampleDbWorker runs only as a worker thread');
const port = parentPort;
const post = (message: WorkerToHost): void => port.postMessage(message);

const at =
  (level: 'trace' | 'debug' | 'info' | 'warn' | 'error') =>
  (message: string, fields?: LogFields): void =>
    post({ op: 'log', level, message, ...(fields ? { fields } : {}) });
const logger: Logger = {
  trace: at('trace'),
  debug: at('debug'),
  info: at('info'),
  warn: at('warn'),
  error: at('error'),
};

async function main(): Promise<void> {
  const data = workerData as SampleWorkerData;
  let db: Db;
  try {
    db = await openSampleDb({
      dataDir: data.dataDir,
      logger,
      onProgress: (message) => post({ op: 'progress', message }),
      ...(data.imageFile !== undefined ? { imageFile: data.imageFile } : {}),
    });
  } catch (error) {
    post({ op: 'openFailed', error: toWorkerError(error) });
    return;
  }
  port.on('message', (message: HostToWorker) => {
    if (message.op === 'close') {
      void db.close().finally(() => {
        post({ op: 'closed' });
        port.close();
      });
      return;
    }
    // The host sends one statement at a time per session and keeps sessions apart; PgliteDb queues anyway.
    const run =
      message.op === 'query' ? db.query(message.sql, message.params) : db.queryText(message.sql, message.params);
    run.then(
      (result) => post({ op: 'result', id: message.id, result }),
      (error: unknown) => post({ op: 'failed', id: message.id, error: toWorkerError(error) }),
    );
  });
  post({ op: 'ready' });
}

void main();

/** Opens the Db a target names: a server through `pg`, or the embedded sample database. */
import type { Logger } from '../logger';
import type { Db } from './db';
import type { ConnectionTarget } from './connectionTarget';
import { openPostgres } from './postgresDb';
import { openSampleDb } from './sample/openSampleDb';
import { openSampleDbInWorker } from './sample/sampleDbInWorker';

export interface OpenOptions {
  /** .pgagent/sample-db of the workspace. */
  sampleDbDir: string;
  logger: Logger;
  onProgress?: (message: string) => void;
  /**
   * Runs the sample database in a worker thread (the extension host: its thread draws the editor); the
   * CLI keeps it in its own thread, which has nothing else to do.
   */
  sampleDbInWorker?: boolean;
}

export function openDatabase(target: ConnectionTarget, options: OpenOptions): Promise<Db> {
  if (target.kind === 'sample') {
    const sample = {
      dataDir: options.sampleDbDir,
      logger: options.logger,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    };
    return options.sampleDbInWorker ? openSampleDbInWorker(sample) : openSampleDb(sample);
  }
  return openPostgres(target, { logger: options.logger });
}

/** Opens the Db a target names: a server through `pg`, or the embedded sample database. */
import type { Logger } from '../logger';
import type { Db } from './db';
import type { ConnectionTarget } from './connectionTarget';
import { openPostgres } from './postgresDb';
import { openSampleDb } from './sample/openSampleDb';

export interface OpenOptions {
  /** .pgagent/sample-db of the workspace. */
  sampleDbDir: string;
  logger: Logger;
  onProgress?: (message: string) => void;
}

export function openDatabase(target: ConnectionTarget, options: OpenOptions): Promise<Db> {
  if (target.kind === 'sample') {
    return openSampleDb({
      dataDir: options.sampleDbDir,
      logger: options.logger,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
  }
  return openPostgres(target, { logger: options.logger });
}

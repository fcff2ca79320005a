/** Opens the Db a target names: a server through `pg`, or the embedded sample database. */
import type { Logger } from '../platform/logger';
import type { Db } from './db';
import type { ConnectionTarget, Env } from './connectionTarget';
import type { SshOptions } from './postgresDb';
import { openPostgres } from './postgresDb';
import { openSampleDb } from './sample/openSampleDb';
import { holdSampleDb, releasedOnClose } from './sample/sampleDbHold';
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
  /** Who holds the sample database while it is open, shown to a second opener: "VS Code", "pg-agent sql". */
  sampleDbHeldBy?: string;
  /** How long to wait for another process to close the sample database (default 5 s). */
  sampleDbWaitMs?: number;
  /** Where libpq's files are found (HOME, PGPASSFILE, ...); process.env when absent. */
  env?: Env;
  /** How an SSH tunnel asks for a host key's acceptance and for secrets, and where keys are pinned. */
  ssh?: SshOptions;
}

export function openDatabase(target: ConnectionTarget, options: OpenOptions): Promise<Db> {
  return target.kind === 'sample'
    ? openSample(options)
    : openPostgres(target, {
        logger: options.logger,
        ...(options.env ? { env: options.env } : {}),
        ...(options.ssh ? { ssh: options.ssh } : {}),
      });
}

/** The sample database, held by this process from before it is opened until it is closed. */
async function openSample(options: OpenOptions): Promise<Db> {
  const hold = await holdSampleDb(options.sampleDbDir, {
    by: options.sampleDbHeldBy ?? 'pg-agent',
    logger: options.logger,
    ...(options.sampleDbWaitMs !== undefined ? { waitMs: options.sampleDbWaitMs } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  const sample = {
    dataDir: options.sampleDbDir,
    logger: options.logger,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
  try {
    return releasedOnClose(
      await (options.sampleDbInWorker ? openSampleDbInWorker(sample) : openSampleDb(sample)),
      hold,
    );
  } catch (error) {
    await hold.release();
    throw error;
  }
}

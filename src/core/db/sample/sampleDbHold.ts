/**
 * One process at a time on a sample database folder. PGlite has no lock of its own between processes: two
 * processes on one folder (a VS Code window and `pg-agent`, or two windows) each keep their own buffers and
 * write the same files, and one loses the other's writes (measured: four processes inserting a row each
 * left three rows). So whoever opens the folder first holds it, in `<folder>.lock` beside it (the folder
 * itself is replaced when the database is rebuilt), and a second opener waits a moment, then is told who
 * holds it. A holder whose process is gone (killed, crashed) is taken over at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { AgentError } from '../../platform/errors';
import { withFileMutex } from '../../fs/fileMutex';
import { writeFileAtomic } from '../../fs/atomicWrite';
import type { Logger } from '../../platform/logger';
import { processAlive } from '../../fs/processAlive';
import type { Db } from '../db';

const holderSchema = z.object({
  host: z.string(),
  pid: z.number().int(),
  by: z.string(),
  since: z.string(),
  nonce: z.string(),
});
export type SampleDbHolder = z.infer<typeof holderSchema>;

export interface HoldOptions {
  /** Who holds it, shown to a second opener: "VS Code", "pg-agent sql". */
  by: string;
  logger: Logger;
  /** How long a second opener waits for the holder to close it (a window reloading) before giving up. */
  waitMs?: number;
  /** Says who it waits for, for a progress notification. */
  onProgress?: (message: string) => void;
}

const DEFAULT_WAIT_MS = 5_000;
const POLL_MS = 200;

/** The lock file of a sample database folder. */
export function sampleDbLockFile(dataDir: string): string {
  return `${path.resolve(dataDir)}.lock`;
}

/** Holds `dataDir` for this process, waiting up to `waitMs` for another holder; SAMPLE_DB_FAILED naming it after. */
export async function holdSampleDb(dataDir: string, options: HoldOptions): Promise<SampleDbHold> {
  const lockFile = sampleDbLockFile(dataDir);
  await mkdir(path.dirname(lockFile), { recursive: true });
  const me: SampleDbHolder = {
    host: hostname(),
    pid: process.pid,
    by: options.by,
    since: new Date().toISOString(),
    nonce: randomBytes(8).toString('hex'),
  };
  const deadline = Date.now() + (options.waitMs ?? DEFAULT_WAIT_MS);
  let logged = false;
  for (;;) {
    const other = await locked(lockFile, async () => {
      const current = await readHolder(lockFile, options.logger);
      if (current && live(current)) return current;
      if (current)
        options.logger.warn('sample database: taking over from a process that is gone', { holder: describe(current) });
      await writeFileAtomic(lockFile, JSON.stringify(me));
      return undefined;
    });
    if (!other) return new SampleDbHold(lockFile, me);
    if (Date.now() >= deadline) throw inUse(dataDir, lockFile, other);
    if (!logged) {
      options.logger.info('sample database: waiting for another process to close it', { holder: describe(other) });
      options.onProgress?.(`Waiting for ${other.by} (pid ${other.pid}) to close the sample database…`);
      logged = true;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export class SampleDbHold {
  constructor(
    readonly lockFile: string,
    readonly holder: SampleDbHolder,
  ) {}

  /** Gives the folder up, unless another process took it over meanwhile (then its lock stays). */
  async release(): Promise<void> {
    await locked(this.lockFile, async () => {
      if ((await readHolder(this.lockFile))?.nonce === this.holder.nonce) await rm(this.lockFile, { force: true });
    });
  }
}

/** `db` with close() also releasing `hold`: the folder is held exactly as long as the database is open. */
export function releasedOnClose(db: Db, hold: SampleDbHold): Db {
  return {
    kind: db.kind,
    label: db.label,
    query: (sql, params) => db.query(sql, params),
    queryText: (sql, params) => db.queryText(sql, params),
    withSession: (work) => db.withSession(work),
    close: async () => {
      try {
        await db.close();
      } finally {
        await hold.release();
      }
    },
  };
}

function locked<T>(lockFile: string, body: () => Promise<T>): Promise<T> {
  const mutex = `${lockFile}.mutex`;
  return withFileMutex(
    mutex,
    body,
    () =>
      new AgentError(
        'SAMPLE_DB_FAILED',
        `The sample database's lock stays locked (${mutex}).`,
        `Delete ${mutex} if no pg-agent or VS Code is running.`,
      ),
  );
}

async function readHolder(lockFile: string, logger?: Logger): Promise<SampleDbHolder | undefined> {
  let text: string;
  try {
    text = await readFile(lockFile, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return holderSchema.parse(JSON.parse(text));
  } catch {
    // Only this code writes it, atomically: what cannot be read was not written by a live holder.
    logger?.warn('sample database: its lock file is not a lock record; replacing it', { lockFile });
    return undefined;
  }
}

/** A holder on another machine (a shared folder) cannot be checked, so it counts as live. */
function live(holder: SampleDbHolder): boolean {
  return holder.host !== hostname() || processAlive(holder.pid);
}

/** "VS Code (laptop:4242) since 14:02:11 UTC". */
function describe(holder: SampleDbHolder): string {
  return `${holder.by} (${holder.host}:${holder.pid}) since ${holder.since.slice(11, 19)} UTC`;
}

function inUse(dataDir: string, lockFile: string, holder: SampleDbHolder): AgentError {
  return new AgentError(
    'SAMPLE_DB_FAILED',
    `The sample database in ${dataDir} is open in ${describe(holder)}. It serves one process at a time: two would each lose the other's writes.`,
    holder.host !== hostname()
      ? `It is held from another machine; if that process is gone, delete ${lockFile}.`
      : `${holder.by === 'VS Code' ? 'Connect that window to another database, or close it' : `Let ${holder.by} finish, or stop it`}, then open the sample database again. A PostgreSQL database has no such limit.`,
  );
}

/**
 * A mutex between processes for a few lines of read-compare-write on files: a directory made with mkdir,
 * which is atomic on every file system. A mutex directory older than STALE_MUTEX_MS belonged to a process
 * that died inside the lines it guards, and is taken over.
 */
import { mkdir, rmdir, stat } from 'node:fs/promises';
import { isErrno } from './errno';

const STALE_MUTEX_MS = 5_000;
const MAX_ATTEMPTS = 400;

/** Runs `body` holding the mutex `dir`; `stuck` is thrown when the mutex stays taken (~3 s). */
export async function withFileMutex<T>(dir: string, body: () => Promise<T>, stuck: () => Error): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dir);
      break;
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
      const age = await stat(dir).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_MUTEX_MS) await rmdir(dir).catch(() => undefined);
      if (attempt > MAX_ATTEMPTS) throw stuck();
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 10));
    }
  }
  try {
    return await body();
  } finally {
    await rmdir(dir).catch(() => undefined);
  }
}

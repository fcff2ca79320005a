/**
 * The one atomic write: a temp file in the same folder, then a rename, so readers never see half a file.
 * Every temp file is named `.<12 hex>.tmp` (hidden), and readers that list folders skip exactly those with
 * isAtomicWriteTemp rather than spelling the scheme themselves.
 *
 * The small files of jobs, leases and checkpoints are read and written with synchronous calls, behind
 * async signatures: each such call blocks for ~10-30 µs, while the same call through the thread pool
 * costs 0.1-0.3 ms of waiting, and a job's step boundary makes dozens of them one after the other
 * (`node bench/run.mjs job`: with the one-pack history commits, overhead p50 117-123 -> 52-56 ms on a
 * loaded machine). Nothing here reads a large file synchronously except the job history, which hashes
 * what it commits anyway.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isErrno } from './errno';

const TEMP_NAME = /^\.[0-9a-f]{12}\.tmp$/;

/** A fresh temp path beside `path`, in the one naming scheme. */
function tempPathFor(path: string): string {
  return join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
}

/** Whether a file name (or the last part of a path) is an atomic write in progress. */
export function isAtomicWriteTemp(nameOrPath: string): boolean {
  return TEMP_NAME.test(basename(nameOrPath));
}

export function writeFileAtomic(path: string, text: string): Promise<void> {
  return settled(() => writeFileAtomicSync(path, text));
}

/** writeFileAtomic for code that is synchronous throughout (the job history's commits, the checkpoints). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const temp = tempPathFor(path);
  try {
    writeFileSync(temp, data);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * writeFileAtomic for records that must survive a crash and be committed only under a check: the data is
 * flushed to disk (fsync) before the rename, and `beforeRename` (a lock still held…) may throw to abandon
 * the write, leaving the old file in place and no temp file behind.
 */
export async function writeFileAtomicDurable(
  path: string,
  text: string,
  beforeRename?: () => Promise<void>,
): Promise<void> {
  const temp = await writeTemp(path, text, true);
  try {
    await beforeRename?.();
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * Creates `path` whole, never replacing it: written to a temp file, then link()ed into place (link fails
 * when the name exists). False when `path` already existed; nothing is left behind either way.
 */
export async function createFileWhole(
  path: string,
  text: string,
  options: { durable?: boolean } = {},
): Promise<boolean> {
  const temp = await writeTemp(path, text, options.durable ?? false);
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

async function writeTemp(path: string, text: string, durable: boolean): Promise<string> {
  const temp = tempPathFor(path);
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(text, 'utf8');
    if (durable) await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return temp;
}

/** The result of synchronous work behind an async signature: a throw becomes a rejection, as callers expect. */
export function settled<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

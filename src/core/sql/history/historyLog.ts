/**
 * The append side of the query history: entries are queued in memory (a push: what a statement pays) and written
 * a moment later, or when the process exits, by appends of whole lines to `.pgagent/history/<database>.jsonl`
 * opened O_APPEND; each write holds whole lines and at most PIPE_BUF bytes, so two processes appending at once
 * never interleave inside a line. A file over `maxBytes` is renamed aside (one process at a time, under a mutex
 * directory), keeping the newest `keep` rotated files.
 */
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../../fs/errno';
import type { HistoryEntry } from './historyEntry';
import { historyFileName, historyLine, MAX_LINE_BYTES } from './historyEntry';

export interface HistoryLogOptions {
  /** Rotate a database's file when it grows past this many bytes (default 8 MiB). */
  maxBytes?: number;
  /** Rotated files kept per database (default 3). */
  keep?: number;
  /** How long appends wait to be written together (default 25 ms). */
  delayMs?: number;
}

const STALE_LOCK_MS = 10_000;

export class HistoryLog {
  private readonly pending = new Map<string, HistoryEntry[]>();
  private readonly fds = new Map<string, number>();
  /** File names by database key (a hash each: computed once). */
  private readonly files = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private madeDir = false;
  private readonly onExit = (): void => this.flush();
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly delayMs: number;
  /** The last write error (a full disk, a read-only folder): history never fails the statement it records. */
  lastError: unknown;

  constructor(
    readonly dir: string,
    options: HistoryLogOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
    this.keep = options.keep ?? 3;
    this.delayMs = options.delayMs ?? 25;
    process.once('exit', this.onExit);
  }

  /** Queues `entry`; it is on disk within `delayMs`, at flush() or when the process exits. */
  append(entry: HistoryEntry): void {
    let file = this.files.get(entry.db);
    if (file === undefined) {
      file = historyFileName(entry.db);
      this.files.set(entry.db, file);
    }
    const queue = this.pending.get(file);
    if (queue) queue.push(entry);
    else this.pending.set(file, [entry]);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.delayMs);
      this.timer.unref();
    }
  }

  /** Writes what is queued now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const [file, entries] of this.pending) {
      this.pending.delete(file);
      try {
        this.write(file, entries);
      } catch (error) {
        this.lastError = error;
      }
    }
  }

  /** Flushes and closes the files; the log can still be appended to (files open again). */
  close(): void {
    this.flush();
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
    process.removeListener('exit', this.onExit);
  }

  private write(file: string, entries: readonly HistoryEntry[]): void {
    if (!this.madeDir) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.madeDir = true;
    }
    const path = join(this.dir, file);
    let fd = this.current(path);
    let chunk = '';
    let chunkBytes = 0;
    for (const entry of entries) {
      const line = historyLine(entry);
      const lineBytes = Buffer.byteLength(line);
      if (chunkBytes > 0 && chunkBytes + lineBytes > MAX_LINE_BYTES) {
        writeSync(fd, chunk);
        chunk = '';
        chunkBytes = 0;
      }
      chunk += line;
      chunkBytes += lineBytes;
    }
    if (chunk.length > 0) writeSync(fd, chunk);
    if (fstatSync(fd).size > this.maxBytes) {
      this.rotate(path);
      fd = this.current(path);
    }
  }

  /** The open file of `path`, opened again when another process rotated it away. */
  private current(path: string): number {
    const open = this.fds.get(path);
    if (open !== undefined) {
      const here = statSync(path, { throwIfNoEntry: false });
      if (here && here.ino === fstatSync(open).ino) return open;
      closeSync(open);
    }
    const fd = openSync(path, 'a', 0o600);
    this.fds.set(path, fd);
    return fd;
  }

  private rotate(path: string): void {
    const lock = `${path}.rotating`;
    try {
      mkdirSync(lock);
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmdirSync(lock);
      return;
    }
    try {
      // Another process may have rotated it between our write and the lock: only a big file moves.
      if ((statSync(path, { throwIfNoEntry: false })?.size ?? 0) <= this.maxBytes) return;
      const stem = path.slice(0, -'.jsonl'.length);
      renameSync(path, `${stem}.${Date.now()}.${process.pid}.jsonl`);
      const base = stem.slice(this.dir.length + 1);
      const rotated = rotatedFiles(this.dir, base);
      for (const old of rotated.slice(this.keep)) unlinkSync(join(this.dir, old));
    } finally {
      rmdirSync(lock);
    }
  }
}

/** The rotated files of a database's history (`<stem>.<ms>.<pid>.jsonl`), newest first. */
export function rotatedFiles(dir: string, stem: string): string[] {
  const pattern = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.(\\d+)\\.jsonl$`);
  return readdirSync(dir)
    .map((name) => ({ name, match: pattern.exec(name) }))
    .filter((f) => f.match)
    .sort((a, b) => Number(b.match?.[1]) - Number(a.match?.[1]))
    .map((f) => f.name);
}

/**
 * The newest part of each database's query history, for a view that shows it (VS Code's History view): only the
 * end of each file is read (a file may be 8 MiB before it rotates), reaching into the newest rotated file when the
 * current one holds too few statements; a file read before and unchanged since (same inode, size, mtime) is not
 * read again. Searching looks in that window only; `pg-agent history --grep` reads everything.
 */
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { namesIn } from '../../fs/listDir';
import type { HistoryEntry } from './historyEntry';
import { historyMatches } from './readHistory';

export interface HistoryTailOptions {
  /** Bytes read from the end of each file (default 512 KiB: a couple of thousand statements). */
  tailBytes?: number;
  /** Statements kept per database, newest first (default 200). */
  perDatabase?: number;
}

export interface DatabaseHistory {
  /** The database's history key (host:port/name, or "sample"). */
  db: string;
  /** Newest first, at most `perDatabase`, those matching the search when there is one. */
  entries: HistoryEntry[];
  /** How many statements the window read holds (before the search). */
  scanned: number;
  /** Older statements exist that were not read (the window ended before the start of the history). */
  more: boolean;
}

interface FileWindow {
  ino: number;
  size: number;
  mtimeMs: number;
  entries: HistoryEntry[];
  /** The window began after the start of the file. */
  cut: boolean;
}

/** `<slug>-<hash8>.jsonl`: a database's current file; `<slug>-<hash8>.<ms>.<pid>.jsonl`: a rotated one. */
const CURRENT = /^(.+-[0-9a-f]{8})\.jsonl$/;
const ROTATED = /^(.+-[0-9a-f]{8})\.(\d+)\.(\d+)\.jsonl$/;

export class HistoryTail {
  private readonly windows = new Map<string, FileWindow>();
  private readonly tailBytes: number;
  private readonly perDatabase: number;
  /** Bytes read from disk by the last read() (what a test and the view's log can check). */
  lastBytesRead = 0;

  constructor(
    readonly dir: string,
    options: HistoryTailOptions = {},
  ) {
    this.tailBytes = options.tailBytes ?? 512 * 1024;
    this.perDatabase = options.perDatabase ?? 200;
  }

  /** Each database's newest statements (databases by their newest statement, newest first), searched by `grep`. */
  async read(grep?: string): Promise<DatabaseHistory[]> {
    this.lastBytesRead = 0;
    const stems = new Map<string, { current: boolean; rotated: { name: string; ms: number }[] }>();
    for (const name of await namesIn(this.dir)) {
      const current = CURRENT.exec(name);
      const rotated = current ? null : ROTATED.exec(name);
      const stem = current?.[1] ?? rotated?.[1];
      if (stem === undefined) continue;
      const files = stems.get(stem) ?? { current: false, rotated: [] };
      if (current) files.current = true;
      else files.rotated.push({ name, ms: Number(rotated?.[2]) });
      stems.set(stem, files);
    }
    const seen = new Set<string>();
    const needle = grep?.trim().toLowerCase() || undefined;
    const databases: DatabaseHistory[] = [];
    for (const [stem, files] of stems) {
      const names = [
        ...(files.current ? [`${stem}.jsonl`] : []),
        ...files.rotated.sort((a, b) => b.ms - a.ms).map((f) => f.name),
      ];
      const entries: HistoryEntry[] = [];
      let more = false;
      for (const [index, name] of names.entries()) {
        seen.add(name);
        const window = await this.window(join(this.dir, name));
        if (!window) continue;
        entries.push(...window.entries);
        more = window.cut || index < names.length - 1;
        // Enough statements, or the window ended inside this file: older files are not read.
        if (entries.length >= this.perDatabase || window.cut) break;
      }
      const db = entries[0]?.db;
      if (db === undefined) continue;
      entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
      const matching = needle ? entries.filter((e) => historyMatches(e, needle)) : entries;
      databases.push({ db, entries: matching.slice(0, this.perDatabase), scanned: entries.length, more });
    }
    // Files gone since the last read are forgotten.
    for (const path of this.windows.keys()) if (!seen.has(path.slice(this.dir.length + 1))) this.windows.delete(path);
    const newest = (d: DatabaseHistory) => d.entries[0]?.at ?? '';
    return databases.sort((a, b) => (newest(a) < newest(b) ? 1 : newest(a) > newest(b) ? -1 : 0));
  }

  /** The entries of the last `tailBytes` of a file, from memory when the file did not change. */
  private async window(path: string): Promise<FileWindow | undefined> {
    const info = await stat(path).catch(() => undefined);
    if (!info) return undefined;
    const known = this.windows.get(path);
    if (known && known.ino === info.ino && known.size === info.size && known.mtimeMs === info.mtimeMs) return known;
    const start = Math.max(0, info.size - this.tailBytes);
    const buffer = Buffer.alloc(info.size - start);
    const handle = await open(path, 'r').catch(() => undefined);
    if (!handle) return undefined;
    let read = 0;
    try {
      while (read < buffer.length) {
        const { bytesRead } = await handle.read(buffer, read, buffer.length - read, start + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
    } finally {
      await handle.close();
    }
    this.lastBytesRead += read;
    let text = buffer.subarray(0, read).toString('utf8');
    // A window that starts inside the file starts inside a line: that line is dropped.
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    const entries: HistoryEntry[] = [];
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      try {
        entries.push(JSON.parse(line) as HistoryEntry);
      } catch {
        // A line cut by a crash mid-write.
      }
    }
    const window = { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs, entries, cut: start > 0 };
    this.windows.set(path, window);
    return window;
  }
}

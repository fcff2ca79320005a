/**
 * One line of a database's query history (`.pgagent/history/<database>.jsonl`): what ran through pg-agent, where,
 * by whom, how long and how many rows; a write names its ticket. Each line stays under PIPE_BUF bytes so that
 * one append of it is never interleaved with another process's.
 */
import { createHash } from 'node:crypto';

export type HistoryOrigin = 'cli' | 'vscode' | 'mcp' | 'guard';

export interface HistoryEntry {
  /** ISO time the statement started. */
  at: string;
  /** The database (host:port/name, or "sample"), never a password. */
  db: string;
  origin: HistoryOrigin;
  who: string;
  kind: 'read' | 'write';
  sql: string;
  /** The SQL was longer than a line may hold: `sql` is its start. */
  sqlTruncated?: true;
  /** Milliseconds; null when the run was not timed here (a read the guard passed on). */
  ms: number | null;
  /** Rows returned (read) or changed in all tables (write); null when unknown. */
  rows: number | null;
  ticket?: string;
  /**
   * Not one run: statements of this shape (this text with other numbers) ran this many times from `at` until the
   * guard's counting window closed (a minute); `sql` is the first of them. The guard counts an application's
   * repeated reads instead of keeping a line each.
   */
  repeats?: number;
  status: 'ok' | 'error';
  error?: string;
}

/** Bytes a line may take: PIPE_BUF on Linux, the size one O_APPEND write keeps whole. */
export const MAX_LINE_BYTES = 4096;

/** The history key of a database from its Db label ("name (user@host:port/db via …)" → "host:port/db"). */
export function historyDatabaseKey(label: string): string {
  if (label.startsWith('sample')) return 'sample';
  const address = /@([^\s()@]+:\d+\/[^\s()]+)/.exec(label)?.[1];
  return address ?? label;
}

/** The file name of a database's history: readable, and unique by a hash of the key. */
export function historyFileName(databaseKey: string): string {
  const slug = databaseKey.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);
  const hash = createHash('sha256').update(databaseKey).digest('hex').slice(0, 8);
  return `${slug}-${hash}.jsonl`;
}

/** The entry as one JSON line of at most MAX_LINE_BYTES bytes (the SQL, then the error, cut to fit). */
export function historyLine(entry: HistoryEntry): string {
  let line = `${JSON.stringify(entry)}\n`;
  if (Buffer.byteLength(line) <= MAX_LINE_BYTES) return line;
  const cut: HistoryEntry = {
    ...entry,
    sqlTruncated: true,
    ...(entry.error ? { error: entry.error.slice(0, 300) } : {}),
  };
  let keep = Math.min(entry.sql.length, 3000);
  do {
    line = `${JSON.stringify({ ...cut, sql: entry.sql.slice(0, keep) })}\n`;
    keep = Math.floor(keep * 0.8);
  } while (Buffer.byteLength(line) > MAX_LINE_BYTES && keep > 0);
  return line;
}

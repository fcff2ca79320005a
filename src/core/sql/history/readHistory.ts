/** The read side of the query history: a database's entries (or every database's), newest first, searchable. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { namesIn } from '../../fs/listDir';
import type { HistoryEntry } from './historyEntry';
import { historyFileName } from './historyEntry';

export interface HistoryQuery {
  /** One database's key (historyDatabaseKey); all databases when absent. */
  db?: string;
  /** Case-insensitive text the SQL, the person, the ticket or the error must contain. */
  grep?: string;
  limit?: number;
}

export async function readHistory(dir: string, query: HistoryQuery = {}): Promise<HistoryEntry[]> {
  const names = (await namesIn(dir)).filter((n) => n.endsWith('.jsonl'));
  const stem = query.db === undefined ? undefined : historyFileName(query.db).slice(0, -'.jsonl'.length);
  // A database's file and its rotated files (`<stem>.<ms>.<pid>.jsonl`).
  const files = stem === undefined ? names : names.filter((n) => n === `${stem}.jsonl` || n.startsWith(`${stem}.`));
  const needle = query.grep?.toLowerCase();
  const entries: HistoryEntry[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      let entry: HistoryEntry;
      try {
        entry = JSON.parse(line) as HistoryEntry;
      } catch {
        continue; // a line cut by a crash mid-write
      }
      if (query.db !== undefined && entry.db !== query.db) continue;
      if (needle && !historyMatches(entry, needle)) continue;
      entries.push(entry);
    }
  }
  entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  return query.limit === undefined ? entries : entries.slice(0, query.limit);
}

/** Whether the SQL, the person, the ticket, the error or the origin contains `needle` (lower case). */
export function historyMatches(entry: HistoryEntry, needle: string): boolean {
  return [entry.sql, entry.who, entry.ticket ?? '', entry.error ?? '', entry.origin].some((t) =>
    t.toLowerCase().includes(needle),
  );
}

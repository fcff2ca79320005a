/**
 * The port the safety path records into (runRead, executeApproved, the guard's passed reads): bound to a
 * surface (origin) and a person once, carried in the settings in force. Recording is a push onto HistoryLog's
 * queue; it never throws into the statement it records.
 */
import type { HistoryEntry, HistoryOrigin } from './historyEntry';
import { historyDatabaseKey } from './historyEntry';
import type { HistoryLog } from './historyLog';

export interface HistoryRun {
  kind: HistoryEntry['kind'];
  sql: string;
  startedAt: number;
  ms: number | null;
  rows: number | null;
  ticket?: string;
  error?: string;
  /** Who, when the surface knows better than its default (a guard user, a ticket's executor). */
  who?: string;
  /** Runs of this shape counted together (HistoryEntry.repeats). */
  repeats?: number;
}

export interface QueryHistory {
  /** Records a run on the database of `dbLabel` (a Db's label). */
  record(dbLabel: string, run: HistoryRun): void;
}

export function queryHistory(log: HistoryLog, origin: HistoryOrigin, who: string): QueryHistory {
  const keys = new Map<string, string>();
  // Reads through the guard come thousands a second: the same millisecond is formatted once.
  let lastMs = NaN;
  let lastAt = '';
  const isoAt = (ms: number): string => {
    if (ms !== lastMs) {
      lastMs = ms;
      lastAt = new Date(ms).toISOString();
    }
    return lastAt;
  };
  return {
    record(dbLabel, run) {
      try {
        let db = keys.get(dbLabel);
        if (db === undefined) {
          db = historyDatabaseKey(dbLabel);
          keys.set(dbLabel, db);
        }
        log.append({
          at: isoAt(run.startedAt),
          db,
          origin,
          who: run.who ?? who,
          kind: run.kind,
          sql: run.sql,
          ms: run.ms === null ? null : Math.round(run.ms * 100) / 100,
          rows: run.rows,
          ...(run.ticket ? { ticket: run.ticket } : {}),
          ...(run.repeats ? { repeats: run.repeats } : {}),
          status: run.error === undefined ? 'ok' : 'error',
          ...(run.error !== undefined ? { error: run.error } : {}),
        });
      } catch (error) {
        log.lastError = error;
      }
    },
  };
}

/**
 * "Run again" of a history entry: what may be sent to the safety path, and what a person must be told first. The
 * statement is checked again as any SQL is (runSql): a read runs read-only, a write is held on a NEW ticket (its
 * old ticket, spent, is never reused); the entry's own `kind` decides nothing. A statement whose text the history
 * cut is refused: what would run is not what ran.
 */
import type { HistoryEntry } from './historyEntry';

export type RunAgain =
  | {
      kind: 'run';
      sql: string;
      /** The entry ran on another database than the active one: say so before running it here. */
      otherDatabase?: string;
    }
  | { kind: 'refused'; reason: string };

export function runAgainOf(entry: HistoryEntry, activeDatabase: string): RunAgain {
  if (entry.sqlTruncated === true) {
    const full = entry.ticket ? ` Its ticket keeps the whole statement: pg-agent approvals show ${entry.ticket}.` : '';
    return {
      kind: 'refused',
      reason: `This statement was longer than the history keeps: its text is cut, so it cannot run again from here.${full}`,
    };
  }
  const sql = entry.sql.trim();
  if (sql.length === 0) return { kind: 'refused', reason: 'This history entry has no SQL to run.' };
  return { kind: 'run', sql, ...(entry.db !== activeDatabase ? { otherDatabase: entry.db } : {}) };
}

/**
 * SPEC §5 4a for row locks: a preview never holds rows another session may want for longer than 250 ms. An
 * UPDATE, DELETE or MERGE locks the rows it changes, a locking read (`SELECT … FOR UPDATE`) the rows it reads, and
 * an INSERT that runs code (a trigger, a function) or resolves a conflict may lock rows too; from the first such
 * statement on, the preview's transaction gets what is left of the bound as its statement_timeout, and a preview
 * stopped by it is reported as not previewed ("it would hold row locks for longer than 250 ms"), with the
 * planner's estimate, instead of as a failure. A BEFORE trigger that sleeps, or a locking read joined with
 * `pg_sleep`, thus holds another session's row for at most the bound, never for seconds.
 */
import type { StatementClassification } from './classification';
import { PREVIEW_BLOCK_BOUND_MS, PREVIEW_BLOCKING_BUDGET_MS } from './ddl/ddlPreview';

const LOCKS_ROWS = new Set(['UpdateStmt', 'DeleteStmt', 'MergeStmt', 'SelectStmt']);

/** Whether running the statement in a preview may lock rows another session could be waiting for. */
export function locksRows(statement: StatementClassification): boolean {
  if (LOCKS_ROWS.has(statement.kind)) return true;
  return (
    statement.kind === 'InsertStmt' && ((statement.reach ?? []).length > 0 || /\bon\s+conflict\b/i.test(statement.sql))
  );
}

/** The preview's row-lock bound, started at the first statement that may lock rows (performance.now() ms). */
export class RowLockBudget {
  private startedAt: number | undefined;
  /** The last statement_timeout set was this bound's (tighter than the preview's own time limit). */
  tightest = false;

  /** The statement_timeout (ms) for this statement, or undefined when no row may be locked yet. */
  timeoutFor(
    statement: StatementClassification,
    previewTimeoutMs: number,
    now = performance.now(),
  ): number | undefined {
    if (this.startedAt === undefined && !locksRows(statement)) return undefined;
    this.startedAt ??= now;
    const left = Math.max(1, Math.round(PREVIEW_BLOCKING_BUDGET_MS - (now - this.startedAt)));
    this.tightest = left < previewTimeoutMs;
    return Math.min(left, previewTimeoutMs);
  }

  /** What the report says when the bound stopped the preview; `estimatedRows`: the planner's estimate. */
  note(estimatedRows: number | null): string {
    const estimate =
      estimatedRows === null ? 'the planner gave no estimate' : `the planner estimates ${estimatedRows} row(s)`;
    return `Not previewed: it would hold row locks for longer than ${PREVIEW_BLOCK_BOUND_MS} ms (stopped after ${PREVIEW_BLOCKING_BUDGET_MS} ms so that no other session waits on its rows; ${estimate}).`;
  }
}

/**
 * The bounds an approved transaction's retry must stay within before the guard lets it commit (README,
 * guard section): no table the ticket does not name, no count above the approved one plus the tolerance
 * (the one comparison core/sql/executeApproved.ts makes), and no DDL the ticket does not hold.
 */
import type { Ticket } from '../../core/approvals/ticket';
import { compareWithApproved } from '../../core/sql/executeApproved';
import type { ChangedTable } from '../../core/sql/tableEffects';

export interface MeasuredTransaction {
  /** Rows per table the transaction changed (pg_stat_xact_user_tables before and after, diffStats). */
  changed: readonly ChangedTable[];
  /** Statement kinds of its DDL (e.g. "CreateStmt"), in order. */
  ddl: readonly string[];
}

/** Why the measured transaction exceeds the approved ticket; empty when it may commit. */
export function exceededBounds(measured: MeasuredTransaction, ticket: Ticket, approvedDdl: readonly string[], tolerance: number): string[] {
  const problems = compareWithApproved(measured.changed, ticket, tolerance);
  const allowed = [...approvedDdl];
  for (const kind of measured.ddl) {
    const at = allowed.indexOf(kind);
    if (at === -1) problems.push(`DDL not in the ticket: ${kind}`);
    else allowed.splice(at, 1);
  }
  return problems;
}

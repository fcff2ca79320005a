/**
 * The bounds an approved transaction's retry must stay within before the guard lets it commit (README,
 * guard section): no table the ticket does not name, no count above the approved one plus the tolerance
 * (the one comparison core/sql/executeApproved.ts makes), and no DDL the ticket does not hold. DDL is
 * compared by its text, not its template: PostgreSQL's fingerprint ignores constants, so `varchar(10)` and
 * `varchar(1000)`, or two DEFAULT values, would be one template.
 */
import type { Ticket } from '../../core/approvals/ticket';
import { compareWithApproved } from '../../core/sql/executeApproved';
import { parseSql } from '../../core/sql/parse';
import type { ChangedTable } from '../../core/sql/tableEffects';

export interface MeasuredTransaction {
  /** Rows per table the transaction changed (pg_stat_xact_user_tables before and after, diffStats). */
  changed: readonly ChangedTable[];
  /** The text of each of its statements that is not DML (its DDL), in order (ddlStatementsOf). */
  ddl: readonly string[];
}

const DML = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'SelectStmt']);

/** Data changes and queries; every other statement kind is DDL (or maintenance, LOCK…) to the guard. */
export const isDml = (kind: string): boolean => DML.has(kind);

/** Each statement of `sql` that is not DML, as its own text (the parser's slice); the parser must be loaded. */
export function ddlStatementsOf(sql: string): string[] {
  return parseSql(sql)
    .statements.filter((p) => !DML.has(p.kind))
    .map((p) => p.sql.trim());
}

/** Why the measured transaction exceeds the approved ticket; empty when it may commit. */
export function exceededBounds(
  measured: MeasuredTransaction,
  ticket: Ticket,
  approvedDdl: readonly string[],
  tolerance: number,
): string[] {
  const problems = compareWithApproved(measured.changed, ticket, tolerance);
  const allowed = [...approvedDdl];
  for (const statement of measured.ddl) {
    const at = allowed.indexOf(statement);
    if (at === -1)
      problems.push(`DDL not in the ticket: ${statement.length > 120 ? `${statement.slice(0, 117)}…` : statement}`);
    else allowed.splice(at, 1);
  }
  return problems;
}

/**
 * Whether a statement may run in a preview at all (BEGIN … ROLLBACK): only data changes and DDL, and only when
 * nothing they run has an effect a rollback does not undo (their reach, their side effects).
 */
import type { StatementClassification } from './classification';
import { blockingEffects } from './reach/reachVerdicts';

/** Statement kinds whose code or data flow the preview cannot contain (procedural code, server files, prepared text). */
const NEVER_PREVIEWED: Record<string, string> = {
  DoStmt: 'a DO block runs code that may act outside the transaction',
  CallStmt: 'a procedure may commit or act outside the transaction',
  ExecuteStmt: 'EXECUTE runs a prepared statement the preview cannot see',
  CopyStmt: 'COPY reads or writes outside the database',
};

/**
 * Why running a statement inside BEGIN … ROLLBACK would not be harmless, if it would not: only data
 * changes and DDL are previewed, and only when they call no function whose effect survives a rollback.
 */
export function whyNotPreviewable(statement: StatementClassification, lockModelKnows = false): string | undefined {
  const never = NEVER_PREVIEWED[statement.kind];
  if (never) return never;
  const reach = blockingEffects(statement);
  if (reach.length > 0) return reach.map((e) => e.reason).join('; ');
  // A query that only calls functions has no rows to measure: its preview would spend sequence values for
  // nothing, as a direct nextval() would (which is not previewed either).
  const sequences = (statement.reachEffects ?? []).filter((e) => e.kind === 'sequence');
  if (statement.kind === 'SelectStmt' && sequences.length > 0) return sequences.map((e) => e.reason).join('; ');
  if (statement.sideEffects.length > 0)
    return `it calls ${statement.sideEffects.join(', ')}, whose effects a rollback does not undo`;
  // Maintenance the lock model knows (REINDEX, CLUSTER, ANALYZE) is previewed under the DDL rules.
  if (lockModelKnows && statement.class === 'admin') return undefined;
  if (statement.class !== 'write' && statement.class !== 'ddl')
    return `${statement.kind} is ${statement.class === 'session' ? 'a session change' : `${statement.class} work`}, not a data change`;
  return undefined;
}

/**
 * What the parser says an input does (SPEC §5.1). Produced by classify.ts from libpg-query's tree;
 * consumed by the read path, impact analysis, risk and the CLI's `classify` command.
 */

import type { ReachEffect, ReachEntry } from '../../shared/reachTypes';

/** SPEC §6 classes, from harmless to dangerous. */
export type SqlClass = 'read' | 'write' | 'ddl' | 'session' | 'admin' | 'unknown';

/** What the safety path does with the input. */
export type SqlDecision =
  /** Runs at once in a READ ONLY transaction. */
  | 'run'
  /** Needs impact analysis and a person's approval ticket. */
  | 'approve'
  /** Never runs through the agent (COPY … PROGRAM, transaction control escaping our transaction, …). */
  | 'refuse';

export interface StatementClassification {
  /** The statement's own text (sliced from the input by the parser's locations), trimmed. */
  sql: string;
  /** 0-based character offset of the statement in the input. */
  offset: number;
  /** Top-level node type from libpg-query: "SelectStmt", "DeleteStmt", "TransactionStmt", ... */
  kind: string;
  /** Every node type found anywhere in the statement's tree, sorted, without duplicates. */
  nodeKinds: string[];
  class: SqlClass;
  decision: SqlDecision;
  /** Why it is not a plain read (empty for plain reads); person-readable, one fact each. */
  reasons: string[];
  /** Tables the statement writes to directly (INSERT/UPDATE/DELETE/MERGE/TRUNCATE targets), "schema.name" or "name". */
  writesTo: string[];
  /** Tables it reads or writes, as written in the statement. */
  tables: string[];
  /** UPDATE or DELETE without a WHERE clause (SPEC §5.5: at least HIGH). */
  unboundedWrite: boolean;
  /** DROP, TRUNCATE or a destructive ALTER (drop column/constraint, type change…): CRITICAL. */
  destructive: boolean;
  /**
   * Functions it calls whose effects a ROLLBACK does not undo (nextval, pg_terminate_backend, dblink…):
   * the impact preview never runs such a statement.
   */
  sideEffects: string[];
  /**
   * False for statements PostgreSQL runs only outside a transaction block (CREATE/DROP INDEX CONCURRENTLY,
   * REINDEX … CONCURRENTLY, VACUUM, ALTER TYPE … ADD VALUE, DETACH PARTITION … CONCURRENTLY): held for
   * approval, never previewed, run alone and cannot be rolled back (SPEC §5.4a).
   */
  transactional: boolean;
  /**
   * The database's own code the statement runs (SPEC §5 1a), once checked against a database (checkSql);
   * absent from a parse-only classification, which has not looked.
   */
  reach?: ReachEntry[];
  /** What the reach does that matters (absent or empty: nothing), worst first; see reachTypes.ts. */
  reachEffects?: ReachEffect[];
  /** Sequences the reach advances (a trigger's nextval, a serial default), disclosed like a direct nextval. */
  reachSequences?: string[];
}

export interface Classification {
  statements: StatementClassification[];
  /** The most dangerous class of all statements ('unknown' beats 'admin' beats 'ddl' beats …). */
  class: SqlClass;
  /** 'refuse' if any statement is refused, else 'approve' if any needs approval, else 'run'. */
  decision: SqlDecision;
  /** All statements' reasons, plus input-level ones ("2 statements: each needs its own review"). */
  reasons: string[];
}

/** A syntax error from PostgreSQL's own grammar, with where it is. */
export interface SqlSyntaxProblem {
  message: string;
  /** 0-based character offset of the error in the input (libpg-query cursorpos - 1). */
  position: number;
}

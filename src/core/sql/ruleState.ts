/**
 * What the classifier's rules share: the context a node is seen in, the facts a statement gathers, and how a rule
 * holds or refuses it (statementRules.ts and schemaRules.ts hold the rules themselves).
 */
import type { SqlClass, SqlDecision } from './classification';
import type { Rec } from './parseTree';

export type Rule = (node: Rec, ctx: Ctx, st: State, sql: string) => Ctx | void;

export interface Ctx {
  /** The node is the statement itself. */
  readonly top: boolean;
  /** Set inside a statement that stores rather than runs its inner statement (PREPARE, EXPLAIN, rule, body). */
  readonly deferred: string | undefined;
  readonly inCte: boolean;
  /** $n placeholders get their values elsewhere (PREPARE, function bodies, EXPLAIN GENERIC_PLAN). */
  readonly paramsOk: boolean;
}

/** One thing the statement does that keeps it from being a plain read. */
interface Fact {
  cls: SqlClass;
  decision: SqlDecision;
  reason: string;
}

export interface State {
  facts: Fact[];
  kinds: Set<string>;
  tables: string[];
  writesTo: string[];
  cteNames: Set<string>;
  unbounded: boolean;
  destructive: boolean;
  sideEffects: string[];
  params: { number: number; location: number }[];
  /** Cleared by statements PostgreSQL runs only outside a transaction block (SPEC §5.4a: held, run alone). */
  transactional: boolean;
}

export const NOT_IN_TRANSACTION = 'cannot run inside a transaction block, so it cannot be previewed or rolled back';
export function holdOutsideTransaction(st: State, cls: SqlClass, reason: string): void {
  st.transactional = false;
  hold(st, cls, reason);
}
export function hold(st: State, cls: SqlClass, reason: string): void {
  st.facts.push({ cls, decision: 'approve', reason });
}

export function refuse(st: State, cls: SqlClass, reason: string): void {
  st.facts.push({ cls, decision: 'refuse', reason });
}

/**
 * The impact of a write (SPEC §5.4, §5.4a, §6 `impact --json`): the planner's estimate, the exact per-table
 * effects of a preview run in BEGIN … ROLLBACK, the risk, whether the preview failed, and for DDL and
 * maintenance the locks, rewrites, dependents and lint found without blocking anyone.
 */
import type { LockPhraseInput } from './lockPhrases';
import type { ReachEntry } from './reachTypes';

export type Risk = 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';

export const RISK_ORDER: readonly Risk[] = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];

/** How a table came to be touched: by the statement itself, by a foreign key action, or by a trigger. */
export type EffectVia = 'direct' | 'cascade' | 'trigger';

export interface TableEffect {
  schema: string;
  name: string;
  via: EffectVia;
  inserted: number;
  updated: number;
  deleted: number;
}

/** A foreign key whose ON DELETE/UPDATE action the statement sets off. */
export interface ForeignKeyActionFired {
  constraint: string;
  /** The referencing table, whose rows the action changes. */
  table: string;
  references: string;
  action: string;
}

export interface TriggerFired {
  table: string;
  name: string;
}

export interface ImpactReport {
  statements: string[];
  /** Rows the planner expects the write to touch (the ModifyTable's child estimate); null when unknown. */
  estimatedRows: number | null;
  /** Rows inserted + updated + deleted in all tables by the preview; null only when no preview could run. */
  exactRows: number | null;
  tables: TableEffect[];
  risk: Risk;
  requiresApproval: boolean;
  /** The preview's failure, PostgreSQL's SQLSTATE and message: the write would fail as written. */
  wouldFail: null | { code: string; message: string };
  previewMs: number;
  warnings: string[];
  /** Beyond SPEC §6's shape (additive): what the preview saw fire. */
  foreignKeyActions: ForeignKeyActionFired[];
  triggers: TriggerFired[];
  /** Whether the statements ran in a preview (BEGIN … ROLLBACK) to the end or to their failure. */
  previewed: boolean;
  /** The lock each table gets and what it blocks (SPEC §6: table, mode, blocks; the rest is additive). */
  locks: TableLock[];
  /** Tables ("schema.name") whose storage is rewritten: seen by the preview's relfilenode, else predicted. */
  rewrites: string[];
  dependents: DependentObject[];
  lint: LintFindingView[];
  /** False: runs outside a transaction (CREATE INDEX CONCURRENTLY, VACUUM…) and cannot be rolled back. */
  transactional: boolean;
  /** The database's own code the statements run (SPEC §5 1a, §6): functions, triggers, rules, … with verdicts. */
  reach: ReachEntry[];
  /**
   * Additive (issue 25): the sessions that held or awaited a lock conflicting with the DDL's own when the
   * impact was computed; absent when none did (and for writes that are not DDL or maintenance).
   */
  lockHolders?: LockHolderView[];
  /**
   * Additive (issue 25): the way back from each destructive statement (DROP TABLE, DROP COLUMN, TRUNCATE) when
   * a recovery window applies, or why there is none. Absent for statements that destroy nothing.
   */
  recovery?: RecoveryView[];
  /**
   * Additive: what comes back out of the quarantine (the undo of a DROP TABLE moves the table back whole: no row is
   * inserted, so the rows above do not show it). Absent when nothing does.
   */
  restores?: RestoreView[];
}

/** A table the write moves back out of the quarantine, with its rows. */
export interface RestoreView {
  /** "public.orders": where it comes back to. */
  table: string;
  /** Counted when cheap (`rowsExact`), else the planner's estimate; null when never analysed. */
  rows: number | null;
  rowsExact: boolean;
  bytes: number;
  /** The whole story in one sentence, for every surface. */
  summary: string;
}

/** How a destructive statement can be undone after it ran, and what that costs. */
export interface RecoveryView {
  /** Index of the statement in `statements`. */
  statement: number;
  /** quarantine: the table is moved aside, not dropped; copy: its data is copied aside first; none: no way back. */
  way: 'quarantine' | 'copy' | 'none';
  /** What is kept: "public.orders", "public.orders.note", or the tables a TRUNCATE empties. */
  targets: string[];
  /** Bytes the copy takes (0 for a move); null when there is none. */
  bytes: number | null;
  /** Days the quarantine keeps it before `pg-agent quarantine purge` may drop it. */
  retentionDays: number;
  /** The whole story in one sentence, for every surface. */
  summary: string;
}

/** A session in the way of a DDL statement's lock: what a DBA asks first about it. */
export interface LockHolderView {
  /** null for a prepared transaction (it has no session). */
  pid: number | null;
  table: string;
  /** The conflicting lock it holds (granted) or awaits. */
  mode: LockModeName;
  granted: boolean;
  user: string | null;
  application: string | null;
  /** pg_stat_activity.state ("idle in transaction", "active", ...). */
  state: string | null;
  /** How long it has been in that state, and its transaction open, in seconds. */
  stateSeconds: number | null;
  transactionSeconds: number | null;
  /** Its current or last query, whitespace folded, cut to 160 characters. */
  query: string | null;
}

export type LockModeName =
  | 'ACCESS SHARE'
  | 'ROW SHARE'
  | 'ROW EXCLUSIVE'
  | 'SHARE UPDATE EXCLUSIVE'
  | 'SHARE'
  | 'SHARE ROW EXCLUSIVE'
  | 'EXCLUSIVE'
  | 'ACCESS EXCLUSIVE';

/** A table's lock as the report gives it; how it reads for a person lives in src/shared/lockPhrases.ts. */
export interface TableLock extends LockPhraseInput {
  mode: LockModeName;
  /** Sessions holding or awaiting a conflicting lock when the impact was computed. */
  waitsBehind: number;
  why: string;
}

export interface DependentObject {
  kind: string;
  name: string;
  effect: string;
}

export interface LintFindingView {
  rule: string;
  severity: 'error' | 'warning' | 'info';
  message: string;
  advice: string;
  saferSql?: string;
}

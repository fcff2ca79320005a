/**
 * What the lock model says of one statement (SPEC §5.4a): the locks it takes, how long they are held, the
 * changes the catalog checks look at; and what each statement's planner is given to fill it in.
 */
import type { ParsedInput, ParsedStatement } from '../parse';
import type { Rec } from '../parseTree';
import type { LockMode } from './lockModes';

/**
 * How long a lock is held: `instant` for a catalog-only change, `scan` when the statement reads the whole
 * table under it (validation, index build), `rewrite` when it writes a new copy of the table's storage.
 */
export type LockWork = 'instant' | 'scan' | 'rewrite';

export const WORK_ORDER: readonly LockWork[] = ['instant', 'scan', 'rewrite'];

export interface PlannedLock {
  /** The relation as written ("orders", "shop.orders"); an index is resolved to its table by the catalog step. */
  relation: string;
  /** `index`: the statement names an index; its table gets `mode` (resolved later). */
  target: 'table' | 'index';
  mode: LockMode;
  work: LockWork;
  /** Why, in a person's words ("CREATE INDEX builds the index under SHARE"). */
  why: string;
}

/** What a statement changes, for the catalog checks that follow (columns and constraints as written). */
export type DdlChange =
  | {
      kind: 'addColumn';
      table: string;
      column: string;
      type: string;
      defaultSql: string | null;
      defaultFunctions: string[];
      notNull: boolean;
      generated: boolean;
      identity: boolean;
    }
  | { kind: 'alterType'; table: string; column: string; type: string; using: boolean }
  | { kind: 'setNotNull'; table: string; column: string }
  | { kind: 'addCheck'; table: string; name: string | null; exprSql: string; notValid: boolean }
  | {
      kind: 'addForeignKey';
      table: string;
      name: string | null;
      columns: string[];
      refTable: string;
      refColumns: string[];
      notValid: boolean;
    }
  | { kind: 'addUnique'; table: string; name: string | null; columns: string[]; primary: boolean; usingIndex: boolean }
  | { kind: 'dropColumn'; table: string; column: string; cascade: boolean }
  | { kind: 'drop'; objectType: string; objects: string[]; cascade: boolean; concurrent: boolean }
  | { kind: 'rename'; table: string; column: string | null; newName: string; objectType: string }
  | { kind: 'createIndex'; table: string; name: string | null; concurrent: boolean; unique: boolean; columns: string[] }
  | { kind: 'reindex'; target: string; objectKind: string; concurrent: boolean }
  | { kind: 'vacuum'; tables: string[]; full: boolean }
  | { kind: 'cluster'; table: string }
  | { kind: 'truncate'; tables: string[]; cascade: boolean }
  | { kind: 'validate'; table: string; name: string };

export interface DdlPlan {
  kind: string;
  locks: PlannedLock[];
  changes: DdlChange[];
  /** False for statements PostgreSQL refuses to run inside a transaction block (SPEC §5.4a list). */
  transactional: boolean;
  /** The model knows this statement kind; false means "no table lock known", never "harmless". */
  known: boolean;
}

export const ACCESS_EXCLUSIVE: LockMode = 'ACCESS EXCLUSIVE';
export const SUE: LockMode = 'SHARE UPDATE EXCLUSIVE';

/**
 * The text a statement's tree was parsed from: the tree's locations are UTF-8 byte offsets into `input`,
 * `indexOfByte` turns them into string indexes (a whole input whose trees were parsed once, or one statement).
 */
export type PlanSource = Pick<ParsedInput, 'input' | 'indexOfByte'>;

/** The parsed statement a plan is made from, with the text its locations point into. */
export interface PlannedStatement {
  statement: ParsedStatement;
  source: PlanSource;
}

/** Fills `plan` from the statement's node (the body under its kind). */
export type Planner = (n: Rec, plan: DdlPlan, source: PlanSource) => void;

export function lock(
  plan: DdlPlan,
  relation: string | undefined,
  mode: LockMode,
  work: LockWork,
  why: string,
  target: 'table' | 'index' = 'table',
): void {
  if (relation !== undefined) plan.locks.push({ relation, target, mode, work, why });
}

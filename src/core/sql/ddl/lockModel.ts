/**
 * The lock model (SPEC §5.4a): for each DDL or maintenance statement, the lock each relation gets, how long
 * it is held relative to the table's size, and the changes later steps check against the catalog (rewrite,
 * would-fail, dependents, lint). Read from the parse tree only; sources are PostgreSQL's documentation of
 * explicit locking and of each command (ALTER TABLE's lock level per subcommand, CREATE INDEX, REINDEX, …).
 */
import { parseSql } from '../parse';
import type { Rec } from '../parseTree';
import { arr, names, objectName, rangeVarName, rec, str, sval } from '../parseTree';
import type { LockMode } from './lockModes';
import { strongest } from './lockModes';

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
  | { kind: 'addColumn'; table: string; column: string; type: string; defaultSql: string | null; defaultFunctions: string[]; notNull: boolean; generated: boolean; identity: boolean }
  | { kind: 'alterType'; table: string; column: string; type: string; using: boolean }
  | { kind: 'setNotNull'; table: string; column: string }
  | { kind: 'addCheck'; table: string; name: string | null; exprSql: string; notValid: boolean }
  | { kind: 'addForeignKey'; table: string; name: string | null; columns: string[]; refTable: string; refColumns: string[]; notValid: boolean }
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

const ACCESS_EXCLUSIVE: LockMode = 'ACCESS EXCLUSIVE';
const SUE: LockMode = 'SHARE UPDATE EXCLUSIVE';

/** Storage parameters ALTER TABLE … SET/RESET changes under SHARE UPDATE EXCLUSIVE (the rest: ACCESS EXCLUSIVE). */
const LIGHT_RELOPTIONS = /^(fillfactor|parallel_workers|vacuum_index_cleanup|vacuum_truncate|log_autovacuum_min_duration|toast_tuple_target|(toast\.)?autovacuum_.*|user_catalog_table)$/;

/**
 * ALTER TABLE subcommand → lock mode and work, from the ALTER TABLE page ("the lock level … is the
 * strongest of those required by any subcommand") and tablecmds.c's AlterTableGetLockLevel as documented.
 * Subcommands not listed take ACCESS EXCLUSIVE (PostgreSQL's own default).
 */
export const ALTER_TABLE_LOCKS: Record<string, { mode: LockMode; work: LockWork; what: string }> = {
  AT_AddColumn: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'ADD COLUMN' },
  AT_DropColumn: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'DROP COLUMN' },
  // ADD COLUMN, ALTER COLUMN TYPE and SET NOT NULL get their least work here; rewrite.ts decides from the
  // catalog whether the default is volatile, the cast binary coercible, NOT NULL already proven.
  AT_AlterColumnType: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'ALTER COLUMN … TYPE' },
  AT_ColumnDefault: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'SET/DROP DEFAULT' },
  AT_SetNotNull: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'SET NOT NULL' },
  AT_DropNotNull: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'DROP NOT NULL' },
  AT_SetStatistics: { mode: SUE, work: 'instant', what: 'SET STATISTICS' },
  AT_SetOptions: { mode: SUE, work: 'instant', what: 'ALTER COLUMN SET (attribute options)' },
  AT_ResetOptions: { mode: SUE, work: 'instant', what: 'ALTER COLUMN RESET (attribute options)' },
  AT_SetStorage: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'SET STORAGE' },
  AT_SetCompression: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'SET COMPRESSION' },
  AT_AddConstraint: { mode: ACCESS_EXCLUSIVE, work: 'scan', what: 'ADD CONSTRAINT' },
  AT_AddIndexConstraint: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'ADD CONSTRAINT … USING INDEX' },
  AT_ValidateConstraint: { mode: SUE, work: 'scan', what: 'VALIDATE CONSTRAINT' },
  AT_DropConstraint: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'DROP CONSTRAINT' },
  AT_ClusterOn: { mode: SUE, work: 'instant', what: 'CLUSTER ON' },
  AT_DropCluster: { mode: SUE, work: 'instant', what: 'SET WITHOUT CLUSTER' },
  AT_SetLogged: { mode: ACCESS_EXCLUSIVE, work: 'rewrite', what: 'SET LOGGED' },
  AT_SetUnLogged: { mode: ACCESS_EXCLUSIVE, work: 'rewrite', what: 'SET UNLOGGED' },
  AT_SetTableSpace: { mode: ACCESS_EXCLUSIVE, work: 'rewrite', what: 'SET TABLESPACE' },
  AT_SetAccessMethod: { mode: ACCESS_EXCLUSIVE, work: 'rewrite', what: 'SET ACCESS METHOD' },
  AT_EnableTrig: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'ENABLE TRIGGER' },
  AT_EnableAlwaysTrig: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'ENABLE ALWAYS TRIGGER' },
  AT_EnableReplicaTrig: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'ENABLE REPLICA TRIGGER' },
  AT_DisableTrig: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'DISABLE TRIGGER' },
  AT_EnableTrigAll: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'ENABLE TRIGGER ALL' },
  AT_DisableTrigAll: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'DISABLE TRIGGER ALL' },
  AT_EnableTrigUser: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'ENABLE TRIGGER USER' },
  AT_DisableTrigUser: { mode: 'SHARE ROW EXCLUSIVE', work: 'instant', what: 'DISABLE TRIGGER USER' },
  AT_AttachPartition: { mode: SUE, work: 'instant', what: 'ATTACH PARTITION' },
  AT_DetachPartition: { mode: ACCESS_EXCLUSIVE, work: 'instant', what: 'DETACH PARTITION' },
  AT_DetachPartitionFinalize: { mode: SUE, work: 'instant', what: 'DETACH PARTITION … FINALIZE' },
};

/** The lock plan of one statement (its own text, parsed again here so locations are relative to it). */
export function planStatement(sql: string): DdlPlan {
  const statement = parseSql(sql).statements[0];
  if (!statement) return { kind: 'unknown', locks: [], changes: [], transactional: true, known: false };
  const kind = statement.kind;
  const body = rec(statement.tree, kind) ?? {};
  const plan: DdlPlan = { kind, locks: [], changes: [], transactional: true, known: true };
  const planner = PLANNERS[kind];
  if (planner) planner(body, plan, statement.sql);
  else plan.known = false;
  plan.locks = mergeLocks(plan.locks);
  return plan;
}

type Planner = (n: Rec, plan: DdlPlan, sql: string) => void;

const lock = (plan: DdlPlan, relation: string | undefined, mode: LockMode, work: LockWork, why: string, target: 'table' | 'index' = 'table') => {
  if (relation !== undefined) plan.locks.push({ relation, target, mode, work, why });
};

const DML_KINDS: Record<string, string> = { InsertStmt: 'INSERT', UpdateStmt: 'UPDATE', DeleteStmt: 'DELETE', MergeStmt: 'MERGE' };

const PLANNERS: Record<string, Planner> = {
  ...Object.fromEntries(
    Object.entries(DML_KINDS).map(([kind, word]): [string, Planner] => [
      kind,
      (n, plan) => lock(plan, rangeVarName(rec(n, 'relation')), 'ROW EXCLUSIVE', 'instant', `${word} takes ROW EXCLUSIVE (row locks only for the rows it changes)`),
    ]),
  ),
  IndexStmt: (n, plan) => {
    const table = rangeVarName(rec(n, 'relation'));
    const concurrent = n.concurrent === true;
    if (concurrent) plan.transactional = false;
    lock(plan, table, concurrent ? SUE : 'SHARE', 'scan', concurrent ? 'CREATE INDEX CONCURRENTLY builds the index under SHARE UPDATE EXCLUSIVE' : 'CREATE INDEX builds the index under SHARE');
    // Plain column keys only (expressions: no duplicate prediction).
    const columns = arr(n, 'indexParams').map((p) => str(rec(p, 'IndexElem'), 'name') ?? '');
    if (table) plan.changes.push({ kind: 'createIndex', table, name: str(n, 'idxname') ?? null, concurrent, unique: n.unique === true, columns: columns.includes('') ? [] : columns });
  },
  DropStmt: (n, plan) => {
    const type = str(n, 'removeType') ?? 'OBJECT';
    const objects = arr(n, 'objects').map(objectName);
    const concurrent = n.concurrent === true;
    const cascade = n.behavior === 'DROP_CASCADE';
    plan.changes.push({ kind: 'drop', objectType: type, objects, cascade, concurrent });
    if (type === 'OBJECT_INDEX') {
      if (concurrent) plan.transactional = false;
      for (const o of objects) lock(plan, o, concurrent ? SUE : ACCESS_EXCLUSIVE, 'instant', concurrent ? 'DROP INDEX CONCURRENTLY waits for queries using the index under SHARE UPDATE EXCLUSIVE' : 'DROP INDEX takes ACCESS EXCLUSIVE on the table of the index', 'index');
    } else if (['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE', 'OBJECT_SEQUENCE'].includes(type)) {
      for (const o of objects) lock(plan, o, ACCESS_EXCLUSIVE, 'instant', 'DROP takes ACCESS EXCLUSIVE');
    } else if (type === 'OBJECT_TRIGGER' || type === 'OBJECT_POLICY' || type === 'OBJECT_RULE') {
      // DROP TRIGGER t ON tbl: the object list is [schema?, table, name].
      for (const o of objects) lock(plan, o.split('.').slice(0, -1).join('.') || undefined, type === 'OBJECT_TRIGGER' ? 'SHARE ROW EXCLUSIVE' : ACCESS_EXCLUSIVE, 'instant', `DROP ${type.replace('OBJECT_', '')} locks its table`);
    }
  },
  AlterTableStmt: (n, plan, sql) => {
    const table = rangeVarName(rec(n, 'relation'));
    if (table === undefined) return;
    if (str(n, 'objtype') === 'OBJECT_INDEX') {
      lock(plan, table, SUE, 'instant', 'ALTER INDEX takes SHARE UPDATE EXCLUSIVE', 'index');
      return;
    }
    for (const item of arr(n, 'cmds')) {
      const cmd = rec(item, 'AlterTableCmd') ?? {};
      planAlterCommand(table, cmd, plan, sql);
    }
  },
  RenameStmt: (n, plan) => {
    const type = str(n, 'renameType') ?? '';
    const table = rangeVarName(rec(n, 'relation'));
    if (table === undefined) return;
    const index = type === 'OBJECT_INDEX';
    // Renaming an index takes SHARE UPDATE EXCLUSIVE since PostgreSQL 12; tables, views and columns ACCESS EXCLUSIVE.
    lock(plan, table, index ? SUE : ACCESS_EXCLUSIVE, 'instant', `RENAME takes ${index ? 'SHARE UPDATE EXCLUSIVE' : 'ACCESS EXCLUSIVE'}`, index ? 'index' : 'table');
    if (!index) plan.changes.push({ kind: 'rename', table, column: type === 'OBJECT_COLUMN' ? (str(n, 'subname') ?? null) : null, newName: str(n, 'newname') ?? '?', objectType: type });
  },
  ReindexStmt: (n, plan) => {
    const objectKind = (str(n, 'kind') ?? '').replace('REINDEX_OBJECT_', '');
    const concurrent = arr(n, 'params').some((p) => {
      const def = rec(p, 'DefElem');
      return str(def, 'defname') === 'concurrently' && !isFalseOption(def?.arg);
    });
    const target = rangeVarName(rec(n, 'relation')) ?? str(n, 'name') ?? '?';
    if (concurrent) plan.transactional = false;
    const asIndex = objectKind === 'INDEX' ? 'index' : 'table';
    // Plain REINDEX: SHARE on the table (writes wait) and ACCESS EXCLUSIVE on each index rebuilt, which every
    // query planned on the table waits for; reported as the ACCESS EXCLUSIVE it effectively is for readers.
    lock(plan, target, concurrent ? SUE : ACCESS_EXCLUSIVE, 'scan', concurrent ? 'REINDEX CONCURRENTLY rebuilds under SHARE UPDATE EXCLUSIVE' : 'REINDEX locks the table against writes (SHARE) and each index rebuilt (ACCESS EXCLUSIVE): queries planned on the table wait', asIndex);
    plan.changes.push({ kind: 'reindex', target, objectKind, concurrent });
  },
  VacuumStmt: (n, plan) => {
    const full = arr(n, 'options').some((o) => str(rec(o, 'DefElem'), 'defname') === 'full' && !isFalseOption(rec(o, 'DefElem')?.arg));
    const tables = arr(n, 'rels').map((r) => rangeVarName(rec(rec(r, 'VacuumRelation'), 'relation'))).filter((t): t is string => t !== undefined);
    const vacuum = n.is_vacuumcmd === true;
    if (vacuum) plan.transactional = false;
    for (const t of tables) {
      if (full) lock(plan, t, ACCESS_EXCLUSIVE, 'rewrite', 'VACUUM FULL rewrites the table under ACCESS EXCLUSIVE');
      else lock(plan, t, SUE, 'scan', `${vacuum ? 'VACUUM' : 'ANALYZE'} takes SHARE UPDATE EXCLUSIVE`);
    }
    if (vacuum) plan.changes.push({ kind: 'vacuum', tables, full });
  },
  ClusterStmt: (n, plan) => {
    const table = rangeVarName(rec(n, 'relation'));
    lock(plan, table, ACCESS_EXCLUSIVE, 'rewrite', 'CLUSTER rewrites the table in index order under ACCESS EXCLUSIVE');
    if (table) plan.changes.push({ kind: 'cluster', table });
  },
  TruncateStmt: (n, plan) => {
    const tables = arr(n, 'relations').map((r) => rangeVarName(rec(r, 'RangeVar'))).filter((t): t is string => t !== undefined);
    for (const t of tables) lock(plan, t, ACCESS_EXCLUSIVE, 'instant', 'TRUNCATE takes ACCESS EXCLUSIVE');
    plan.changes.push({ kind: 'truncate', tables, cascade: n.behavior === 'DROP_CASCADE' });
  },
  CreateStmt: (n, plan) => {
    for (const parent of arr(n, 'inhRelations')) {
      const name = rangeVarName(rec(parent, 'RangeVar'));
      // CREATE TABLE … PARTITION OF takes ACCESS EXCLUSIVE on the parent; INHERITS takes SHARE UPDATE EXCLUSIVE.
      if (rec(n, 'partbound')) lock(plan, name, ACCESS_EXCLUSIVE, 'instant', 'CREATE TABLE … PARTITION OF takes ACCESS EXCLUSIVE on the parent');
      else lock(plan, name, SUE, 'instant', 'CREATE TABLE … INHERITS takes SHARE UPDATE EXCLUSIVE on the parent');
    }
    for (const element of arr(n, 'tableElts')) {
      const constraints = [...arr(rec(element, 'ColumnDef'), 'constraints'), ...(rec(element, 'Constraint') ? [element] : [])];
      for (const c of constraints) {
        const con = rec(c, 'Constraint');
        if (str(con, 'contype') === 'CONSTR_FOREIGN') lock(plan, rangeVarName(rec(con, 'pktable')), 'SHARE ROW EXCLUSIVE', 'instant', 'a new foreign key takes SHARE ROW EXCLUSIVE on the referenced table');
      }
    }
  },
  ViewStmt: () => undefined,
  CreateTableAsStmt: () => undefined,
  CommentStmt: (n, plan) => {
    const type = str(n, 'objtype') ?? '';
    if (type === 'OBJECT_TABLE' || type === 'OBJECT_COLUMN' || type === 'OBJECT_VIEW') {
      const name = objectName(n.object);
      const table = type === 'OBJECT_COLUMN' ? name.split('.').slice(0, -1).join('.') : name;
      lock(plan, table, SUE, 'instant', 'COMMENT takes SHARE UPDATE EXCLUSIVE');
    }
  },
  // GRANT/REVOKE change pg_class.relacl with a row lock on the catalog only: no table lock.
  GrantStmt: () => undefined,
  CreateTrigStmt: (n, plan) => lock(plan, rangeVarName(rec(n, 'relation')), 'SHARE ROW EXCLUSIVE', 'instant', 'CREATE TRIGGER takes SHARE ROW EXCLUSIVE'),
  CreatePolicyStmt: (n, plan) => lock(plan, rangeVarName(rec(n, 'table')), ACCESS_EXCLUSIVE, 'instant', 'CREATE POLICY takes ACCESS EXCLUSIVE'),
  RuleStmt: (n, plan) => lock(plan, rangeVarName(rec(n, 'relation')), ACCESS_EXCLUSIVE, 'instant', 'CREATE RULE takes ACCESS EXCLUSIVE'),
  RefreshMatViewStmt: (n, plan) => {
    const concurrent = n.concurrent === true;
    lock(plan, rangeVarName(rec(n, 'relation')), concurrent ? 'EXCLUSIVE' : ACCESS_EXCLUSIVE, 'rewrite', concurrent ? 'REFRESH … CONCURRENTLY takes EXCLUSIVE (reads go on)' : 'REFRESH MATERIALIZED VIEW takes ACCESS EXCLUSIVE');
  },
  LockStmt: (n, plan) => {
    const mode = LOCK_STMT_MODES[typeof n.mode === 'number' ? n.mode : 8] ?? ACCESS_EXCLUSIVE;
    for (const r of arr(n, 'relations')) lock(plan, rangeVarName(rec(r, 'RangeVar')), mode, 'instant', `LOCK TABLE … IN ${mode} MODE`);
  },
  AlterEnumStmt: (n, plan) => {
    // ADD VALUE is listed by SPEC §5.4a with the statements run alone: the new value cannot be used in the
    // transaction that adds it, so an approved run commits it on its own. It locks the type, no table.
    if (str(n, 'newVal') !== undefined && str(n, 'oldVal') === undefined) plan.transactional = false;
  },
};

/** LockStmt.mode is the C lock level (1 = AccessShareLock … 8 = AccessExclusiveLock). */
const LOCK_STMT_MODES: Record<number, LockMode> = {
  1: 'ACCESS SHARE', 2: 'ROW SHARE', 3: 'ROW EXCLUSIVE', 4: SUE, 5: 'SHARE', 6: 'SHARE ROW EXCLUSIVE', 7: 'EXCLUSIVE', 8: ACCESS_EXCLUSIVE,
};

/** A boolean option that is certainly false, as PostgreSQL's defGetBoolean reads it (no argument = true). */
function isFalseOption(arg: unknown): boolean {
  if (arg === undefined) return false;
  const integer = rec(arg, 'Integer');
  if (integer) return (integer.ival ?? 0) === 0;
  const text = sval(arg)?.toLowerCase();
  return text === 'false' || text === 'off';
}

function planAlterCommand(table: string, cmd: Rec, plan: DdlPlan, sql: string): void {
  const subtype = str(cmd, 'subtype') ?? '';
  const known = ALTER_TABLE_LOCKS[subtype];
  let mode = known?.mode ?? ACCESS_EXCLUSIVE;
  let work = known?.work ?? 'instant';
  const what = known?.what ?? subtype.replace('AT_', '');
  const column = str(cmd, 'name');
  const def = cmd.def;
  switch (subtype) {
    case 'AT_AddColumn': {
      const col = rec(def, 'ColumnDef') ?? {};
      const constraints = arr(col, 'constraints').map((c) => rec(c, 'Constraint') ?? {});
      const dflt = constraints.find((c) => str(c, 'contype') === 'CONSTR_DEFAULT');
      const generated = constraints.some((c) => str(c, 'contype') === 'CONSTR_GENERATED');
      const identity = constraints.some((c) => str(c, 'contype') === 'CONSTR_IDENTITY');
      // A stored generated or identity column is computed for every row: the table is rewritten.
      if (generated || identity) work = 'rewrite';
      plan.changes.push({
        kind: 'addColumn', table, column: str(col, 'colname') ?? '?', type: typeText(rec(col, 'typeName')),
        defaultSql: dflt ? exprText(sql, dflt.raw_expr) : null, defaultFunctions: dflt ? functionNames(dflt.raw_expr) : [],
        notNull: constraints.some((c) => str(c, 'contype') === 'CONSTR_NOTNULL' || str(c, 'contype') === 'CONSTR_PRIMARY'), generated, identity,
      });
      for (const c of constraints) {
        if (str(c, 'contype') === 'CONSTR_FOREIGN') lock(plan, rangeVarName(rec(c, 'pktable')), 'SHARE ROW EXCLUSIVE', 'scan', 'a new foreign key takes SHARE ROW EXCLUSIVE on the referenced table');
        if (str(c, 'contype') === 'CONSTR_CHECK' || str(c, 'contype') === 'CONSTR_UNIQUE' || str(c, 'contype') === 'CONSTR_PRIMARY') work = work === 'rewrite' ? work : 'scan';
      }
      break;
    }
    case 'AT_AlterColumnType': {
      const col = rec(def, 'ColumnDef') ?? {};
      plan.changes.push({ kind: 'alterType', table, column: column ?? '?', type: typeText(rec(col, 'typeName')), using: col.raw_default !== undefined });
      break;
    }
    case 'AT_SetNotNull':
      plan.changes.push({ kind: 'setNotNull', table, column: column ?? '?' });
      break;
    case 'AT_DropColumn':
      plan.changes.push({ kind: 'dropColumn', table, column: column ?? '?', cascade: cmd.behavior === 'DROP_CASCADE' });
      break;
    case 'AT_ValidateConstraint':
      plan.changes.push({ kind: 'validate', table, name: column ?? '?' });
      break;
    case 'AT_SetRelOptions':
    case 'AT_ResetRelOptions': {
      const options = arr(rec(def, 'List'), 'items').map((o) => str(rec(o, 'DefElem'), 'defname') ?? '');
      const nsOptions = arr(rec(def, 'List'), 'items').map((o) => {
        const d = rec(o, 'DefElem');
        const ns = str(d, 'defnamespace');
        return ns ? `${ns}.${str(d, 'defname') ?? ''}` : (str(d, 'defname') ?? '');
      });
      const light = nsOptions.every((o) => LIGHT_RELOPTIONS.test(o)) && options.length > 0;
      mode = light ? SUE : ACCESS_EXCLUSIVE;
      break;
    }
    case 'AT_AddConstraint': {
      const con = rec(def, 'Constraint') ?? {};
      const contype = str(con, 'contype');
      const notValid = con.skip_validation === true;
      const name = str(con, 'conname') ?? null;
      if (contype === 'CONSTR_FOREIGN') {
        mode = 'SHARE ROW EXCLUSIVE';
        const refTable = rangeVarName(rec(con, 'pktable'));
        lock(plan, refTable, 'SHARE ROW EXCLUSIVE', notValid ? 'instant' : 'scan', 'a new foreign key takes SHARE ROW EXCLUSIVE on the referenced table');
        plan.changes.push({ kind: 'addForeignKey', table, name, columns: arr(con, 'fk_attrs').map((a) => sval(a) ?? '?'), refTable: refTable ?? '?', refColumns: arr(con, 'pk_attrs').map((a) => sval(a) ?? '?'), notValid });
      } else if (contype === 'CONSTR_CHECK') {
        plan.changes.push({ kind: 'addCheck', table, name, exprSql: checkText(sql, con), notValid });
      } else if (contype === 'CONSTR_UNIQUE' || contype === 'CONSTR_PRIMARY') {
        const usingIndex = str(con, 'indexname') !== undefined;
        plan.changes.push({ kind: 'addUnique', table, name, columns: arr(con, 'keys').map((k) => sval(k) ?? '?'), primary: contype === 'CONSTR_PRIMARY', usingIndex });
        if (usingIndex) work = 'instant';
      } else if (contype === 'CONSTR_NOTNULL') {
        plan.changes.push({ kind: 'setNotNull', table, column: sval(arr(con, 'keys')[0]) ?? '?' });
      }
      if (notValid) work = 'instant';
      break;
    }
    case 'AT_AttachPartition':
    case 'AT_DetachPartition': {
      const cmdDef = rec(def, 'PartitionCmd') ?? {};
      const partition = rangeVarName(rec(cmdDef, 'name'));
      const concurrent = cmdDef.concurrent === true;
      if (subtype === 'AT_DetachPartition' && concurrent) {
        plan.transactional = false;
        mode = SUE;
        lock(plan, partition, SUE, 'instant', 'DETACH PARTITION CONCURRENTLY takes SHARE UPDATE EXCLUSIVE on the partition');
      } else {
        // ATTACH scans the partition for rows outside the bound unless a valid CHECK already proves it.
        lock(plan, partition, ACCESS_EXCLUSIVE, subtype === 'AT_AttachPartition' ? 'scan' : 'instant', `${what} takes ACCESS EXCLUSIVE on the partition`);
      }
      break;
    }
    default:
      break;
  }
  lock(plan, table, mode, work, `ALTER TABLE ${what} takes ${mode}`);
}

/** Keeps one lock per relation: the strongest mode and the longest work (what a person must know). */
function mergeLocks(locks: readonly PlannedLock[]): PlannedLock[] {
  const byRelation = new Map<string, PlannedLock>();
  for (const l of locks) {
    const key = `${l.target}:${l.relation}`;
    const seen = byRelation.get(key);
    if (!seen) {
      byRelation.set(key, { ...l });
      continue;
    }
    const mode = strongest(seen.mode, l.mode);
    const work = WORK_ORDER.indexOf(l.work) > WORK_ORDER.indexOf(seen.work) ? l.work : seen.work;
    byRelation.set(key, { ...seen, mode, work, why: mode === seen.mode ? seen.why : l.why });
  }
  return [...byRelation.values()];
}

function typeText(typeName: Rec | undefined): string {
  const parts = arr(typeName, 'names').map((p) => sval(p) ?? '?').filter((p) => p !== 'pg_catalog');
  const mods = arr(typeName, 'typmods')
    .map((m) => rec(rec(m, 'A_Const'), 'ival')?.ival)
    .filter((v): v is number => typeof v === 'number')
    .map(String);
  const bounds = arr(typeName, 'arrayBounds').length > 0 ? '[]' : '';
  return `${parts.join('.')}${mods.length > 0 ? `(${mods.join(',')})` : ''}${bounds}`;
}

/** Every function name called in an expression (to look up its volatility in the catalog). */
function functionNames(expr: unknown): string[] {
  const found: string[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (typeof v !== 'object' || v === null) return;
    const call = rec(v, 'FuncCall');
    if (call) found.push(names(call.funcname));
    // SQLValueFunction (now(), current_timestamp) is stable: no rewrite; nextval() shows up as a FuncCall.
    Object.values(v).forEach(visit);
  };
  visit(expr);
  return found;
}

/**
 * The SQL text of an expression: from the earliest location found in its tree to the end of the balanced
 * expression (the tree holds start locations only). Used to build read-only checks and safer statements.
 */
function exprText(sql: string, expr: unknown): string {
  const start = earliestLocation(expr);
  if (start === undefined) return '';
  const chars = byteToChar(sql, start);
  return scanExpression(sql, chars);
}

/** The text inside CHECK ( … ) of a constraint. */
function checkText(sql: string, con: Rec): string {
  const from = byteToChar(sql, typeof con.location === 'number' ? con.location : 0);
  const at = sql.toUpperCase().indexOf('CHECK', from);
  const open = sql.indexOf('(', at);
  if (at < 0 || open < 0) return '';
  const end = matchParen(sql, open);
  return sql.slice(open + 1, end).trim();
}

function earliestLocation(v: unknown): number | undefined {
  let min: number | undefined;
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (typeof x !== 'object' || x === null) return;
    for (const [key, value] of Object.entries(x)) {
      if (key === 'location' && typeof value === 'number' && value >= 0) min = min === undefined ? value : Math.min(min, value);
      else visit(value);
    }
  };
  visit(v);
  return min;
}

/** From `start`, the expression up to a top-level comma, closing parenthesis or keyword that ends a column definition. */
function scanExpression(sql: string, start: number): string {
  let depth = 0;
  let i = start;
  for (; i < sql.length; i++) {
    const ch = sql[i] ?? '';
    if (ch === "'" || ch === '"') {
      i = skipQuoted(sql, i);
      continue;
    }
    if (ch === '(') depth++;
    else if (ch === ')') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && (ch === ',' || ch === ';')) break;
    else if (depth === 0 && /\s/.test(ch) && /^\s+(NOT\s+NULL|NULL|CHECK|REFERENCES|UNIQUE|PRIMARY|CONSTRAINT|COLLATE|GENERATED)\b/i.test(sql.slice(i))) break;
  }
  return sql.slice(start, i).trim();
}

function matchParen(sql: string, open: number): number {
  let depth = 0;
  for (let i = open; i < sql.length; i++) {
    const ch = sql[i] ?? '';
    if (ch === "'" || ch === '"') i = skipQuoted(sql, i);
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return i;
  }
  return sql.length;
}

function skipQuoted(sql: string, at: number): number {
  const quote = sql[at];
  for (let i = at + 1; i < sql.length; i++) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i++;
      else return i;
    }
  }
  return sql.length;
}

/** Tree locations are UTF-8 byte offsets; identity for ASCII text. */
function byteToChar(sql: string, byteOffset: number): number {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(sql)) return byteOffset;
  return Buffer.from(sql, 'utf8').subarray(0, byteOffset).toString('utf8').length;
}

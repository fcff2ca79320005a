/**
 * The lock each DDL, maintenance or DML statement takes (SPEC §5.4a), from PostgreSQL's documentation of
 * explicit locking and of each command (CREATE INDEX, REINDEX, VACUUM, TRUNCATE, …); ALTER TABLE's
 * subcommands are in alterTableLocks.ts.
 */
import { arr, isFalseOption, objectName, rangeVarName, rec, str } from '../parseTree';
import { planAlterCommand } from './alterTableLocks';
import type { Planner } from './ddlPlan';
import { ACCESS_EXCLUSIVE, SUE, lock } from './ddlPlan';
import type { LockMode } from './lockModes';

const DML_KINDS: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
};

/** Each statement kind the lock model knows → its planner; a kind not here is `known: false`. */
export const PLANNERS: Record<string, Planner> = {
  ...Object.fromEntries(
    Object.entries(DML_KINDS).map(([kind, word]): [string, Planner] => [
      kind,
      (n, plan) =>
        lock(
          plan,
          rangeVarName(rec(n, 'relation')),
          'ROW EXCLUSIVE',
          'instant',
          `${word} takes ROW EXCLUSIVE (row locks only for the rows it changes)`,
        ),
    ]),
  ),
  IndexStmt: (n, plan) => {
    const table = rangeVarName(rec(n, 'relation'));
    const concurrent = n.concurrent === true;
    if (concurrent) plan.transactional = false;
    lock(
      plan,
      table,
      concurrent ? SUE : 'SHARE',
      'scan',
      concurrent
        ? 'CREATE INDEX CONCURRENTLY builds the index under SHARE UPDATE EXCLUSIVE'
        : 'CREATE INDEX builds the index under SHARE',
    );
    // Plain column keys only (expressions: no duplicate prediction).
    const columns = arr(n, 'indexParams').map((p) => str(rec(p, 'IndexElem'), 'name') ?? '');
    if (table)
      plan.changes.push({
        kind: 'createIndex',
        table,
        name: str(n, 'idxname') ?? null,
        concurrent,
        unique: n.unique === true,
        columns: columns.includes('') ? [] : columns,
      });
  },
  DropStmt: (n, plan) => {
    const type = str(n, 'removeType') ?? 'OBJECT';
    const objects = arr(n, 'objects').map(objectName);
    const concurrent = n.concurrent === true;
    const cascade = n.behavior === 'DROP_CASCADE';
    plan.changes.push({ kind: 'drop', objectType: type, objects, cascade, concurrent });
    if (type === 'OBJECT_INDEX') {
      if (concurrent) plan.transactional = false;
      for (const o of objects)
        lock(
          plan,
          o,
          concurrent ? SUE : ACCESS_EXCLUSIVE,
          'instant',
          concurrent
            ? 'DROP INDEX CONCURRENTLY waits for queries using the index under SHARE UPDATE EXCLUSIVE'
            : 'DROP INDEX takes ACCESS EXCLUSIVE on the table of the index',
          'index',
        );
    } else if (
      ['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE', 'OBJECT_SEQUENCE'].includes(type)
    ) {
      for (const o of objects) lock(plan, o, ACCESS_EXCLUSIVE, 'instant', 'DROP takes ACCESS EXCLUSIVE');
    } else if (type === 'OBJECT_TRIGGER' || type === 'OBJECT_POLICY' || type === 'OBJECT_RULE') {
      // DROP TRIGGER t ON tbl: the object list is [schema?, table, name].
      for (const o of objects)
        lock(
          plan,
          o.split('.').slice(0, -1).join('.') || undefined,
          type === 'OBJECT_TRIGGER' ? 'SHARE ROW EXCLUSIVE' : ACCESS_EXCLUSIVE,
          'instant',
          `DROP ${type.replace('OBJECT_', '')} locks its table`,
        );
    }
  },
  AlterTableStmt: (n, plan, source) => {
    const table = rangeVarName(rec(n, 'relation'));
    if (table === undefined) return;
    if (str(n, 'objtype') === 'OBJECT_INDEX') {
      lock(plan, table, SUE, 'instant', 'ALTER INDEX takes SHARE UPDATE EXCLUSIVE', 'index');
      return;
    }
    for (const item of arr(n, 'cmds')) {
      const cmd = rec(item, 'AlterTableCmd') ?? {};
      planAlterCommand(table, cmd, plan, source);
    }
  },
  RenameStmt: (n, plan) => {
    const type = str(n, 'renameType') ?? '';
    const table = rangeVarName(rec(n, 'relation'));
    if (table === undefined) return;
    const index = type === 'OBJECT_INDEX';
    // Renaming an index takes SHARE UPDATE EXCLUSIVE since PostgreSQL 12; tables, views and columns ACCESS EXCLUSIVE.
    lock(
      plan,
      table,
      index ? SUE : ACCESS_EXCLUSIVE,
      'instant',
      `RENAME takes ${index ? 'SHARE UPDATE EXCLUSIVE' : 'ACCESS EXCLUSIVE'}`,
      index ? 'index' : 'table',
    );
    if (!index)
      plan.changes.push({
        kind: 'rename',
        table,
        column: type === 'OBJECT_COLUMN' ? (str(n, 'subname') ?? null) : null,
        newName: str(n, 'newname') ?? '?',
        objectType: type,
      });
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
    lock(
      plan,
      target,
      concurrent ? SUE : ACCESS_EXCLUSIVE,
      'scan',
      concurrent
        ? 'REINDEX CONCURRENTLY rebuilds under SHARE UPDATE EXCLUSIVE'
        : 'REINDEX locks the table against writes (SHARE) and each index rebuilt (ACCESS EXCLUSIVE): queries planned on the table wait',
      asIndex,
    );
    plan.changes.push({ kind: 'reindex', target, objectKind, concurrent });
  },
  VacuumStmt: (n, plan) => {
    const full = arr(n, 'options').some(
      (o) => str(rec(o, 'DefElem'), 'defname') === 'full' && !isFalseOption(rec(o, 'DefElem')?.arg),
    );
    const tables = arr(n, 'rels')
      .map((r) => rangeVarName(rec(rec(r, 'VacuumRelation'), 'relation')))
      .filter((t): t is string => t !== undefined);
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
    const tables = arr(n, 'relations')
      .map((r) => rangeVarName(rec(r, 'RangeVar')))
      .filter((t): t is string => t !== undefined);
    for (const t of tables) lock(plan, t, ACCESS_EXCLUSIVE, 'instant', 'TRUNCATE takes ACCESS EXCLUSIVE');
    plan.changes.push({ kind: 'truncate', tables, cascade: n.behavior === 'DROP_CASCADE' });
  },
  CreateStmt: (n, plan) => {
    for (const parent of arr(n, 'inhRelations')) {
      const name = rangeVarName(rec(parent, 'RangeVar'));
      // CREATE TABLE … PARTITION OF takes ACCESS EXCLUSIVE on the parent; INHERITS takes SHARE UPDATE EXCLUSIVE.
      if (rec(n, 'partbound'))
        lock(
          plan,
          name,
          ACCESS_EXCLUSIVE,
          'instant',
          'CREATE TABLE … PARTITION OF takes ACCESS EXCLUSIVE on the parent',
        );
      else lock(plan, name, SUE, 'instant', 'CREATE TABLE … INHERITS takes SHARE UPDATE EXCLUSIVE on the parent');
    }
    for (const element of arr(n, 'tableElts')) {
      const constraints = [
        ...arr(rec(element, 'ColumnDef'), 'constraints'),
        ...(rec(element, 'Constraint') ? [element] : []),
      ];
      for (const c of constraints) {
        const con = rec(c, 'Constraint');
        if (str(con, 'contype') === 'CONSTR_FOREIGN')
          lock(
            plan,
            rangeVarName(rec(con, 'pktable')),
            'SHARE ROW EXCLUSIVE',
            'instant',
            'a new foreign key takes SHARE ROW EXCLUSIVE on the referenced table',
          );
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
  CreateTrigStmt: (n, plan) =>
    lock(
      plan,
      rangeVarName(rec(n, 'relation')),
      'SHARE ROW EXCLUSIVE',
      'instant',
      'CREATE TRIGGER takes SHARE ROW EXCLUSIVE',
    ),
  CreatePolicyStmt: (n, plan) =>
    lock(plan, rangeVarName(rec(n, 'table')), ACCESS_EXCLUSIVE, 'instant', 'CREATE POLICY takes ACCESS EXCLUSIVE'),
  RuleStmt: (n, plan) =>
    lock(plan, rangeVarName(rec(n, 'relation')), ACCESS_EXCLUSIVE, 'instant', 'CREATE RULE takes ACCESS EXCLUSIVE'),
  RefreshMatViewStmt: (n, plan) => {
    const concurrent = n.concurrent === true;
    lock(
      plan,
      rangeVarName(rec(n, 'relation')),
      concurrent ? 'EXCLUSIVE' : ACCESS_EXCLUSIVE,
      'rewrite',
      concurrent
        ? 'REFRESH … CONCURRENTLY takes EXCLUSIVE (reads go on)'
        : 'REFRESH MATERIALIZED VIEW takes ACCESS EXCLUSIVE',
    );
  },
  LockStmt: (n, plan) => {
    const mode = LOCK_STMT_MODES[typeof n.mode === 'number' ? n.mode : 8] ?? ACCESS_EXCLUSIVE;
    for (const r of arr(n, 'relations'))
      lock(plan, rangeVarName(rec(r, 'RangeVar')), mode, 'instant', `LOCK TABLE … IN ${mode} MODE`);
  },
  AlterEnumStmt: (n, plan) => {
    // ADD VALUE is listed by SPEC §5.4a with the statements run alone: the new value cannot be used in the
    // transaction that adds it, so an approved run commits it on its own. It locks the type, no table.
    if (str(n, 'newVal') !== undefined && str(n, 'oldVal') === undefined) plan.transactional = false;
  },
};

/** LockStmt.mode is the C lock level (1 = AccessShareLock … 8 = AccessExclusiveLock). */
const LOCK_STMT_MODES: Record<number, LockMode> = {
  1: 'ACCESS SHARE',
  2: 'ROW SHARE',
  3: 'ROW EXCLUSIVE',
  4: SUE,
  5: 'SHARE',
  6: 'SHARE ROW EXCLUSIVE',
  7: 'EXCLUSIVE',
  8: ACCESS_EXCLUSIVE,
};

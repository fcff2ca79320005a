/**
 * ALTER TABLE's locks, from the ALTER TABLE page ("the lock level … is the strongest of those required by any
 * subcommand") and tablecmds.c's AlterTableGetLockLevel as documented: each subcommand's lock and work, and
 * the changes the catalog checks look at (added columns, types, constraints, partitions).
 */
import type { Rec } from '../parseTree';
import { arr, rangeVarName, rec, str, sval } from '../parseTree';
import type { DdlPlan, LockWork, PlanSource } from './ddlPlan';
import { ACCESS_EXCLUSIVE, SUE, lock } from './ddlPlan';
import type { LockMode } from './lockModes';
import { checkText, exprText, functionNames, typeText } from './treeText';

/** Storage parameters ALTER TABLE … SET/RESET changes under SHARE UPDATE EXCLUSIVE (the rest: ACCESS EXCLUSIVE). */
const LIGHT_RELOPTIONS =
  /^(fillfactor|parallel_workers|vacuum_index_cleanup|vacuum_truncate|log_autovacuum_min_duration|toast_tuple_target|(toast\.)?autovacuum_.*|user_catalog_table)$/;

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

/** One ALTER TABLE subcommand: its lock on the table (and on a referenced table or partition) and its change. */
export function planAlterCommand(table: string, cmd: Rec, plan: DdlPlan, source: PlanSource): void {
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
        kind: 'addColumn',
        table,
        column: str(col, 'colname') ?? '?',
        type: typeText(rec(col, 'typeName')),
        defaultSql: dflt ? exprText(source, dflt.raw_expr) : null,
        defaultFunctions: dflt ? functionNames(dflt.raw_expr) : [],
        notNull: constraints.some(
          (c) => str(c, 'contype') === 'CONSTR_NOTNULL' || str(c, 'contype') === 'CONSTR_PRIMARY',
        ),
        generated,
        identity,
      });
      for (const c of constraints) {
        if (str(c, 'contype') === 'CONSTR_FOREIGN')
          lock(
            plan,
            rangeVarName(rec(c, 'pktable')),
            'SHARE ROW EXCLUSIVE',
            'scan',
            'a new foreign key takes SHARE ROW EXCLUSIVE on the referenced table',
          );
        if (
          str(c, 'contype') === 'CONSTR_CHECK' ||
          str(c, 'contype') === 'CONSTR_UNIQUE' ||
          str(c, 'contype') === 'CONSTR_PRIMARY'
        )
          work = work === 'rewrite' ? work : 'scan';
      }
      break;
    }
    case 'AT_AlterColumnType': {
      const col = rec(def, 'ColumnDef') ?? {};
      plan.changes.push({
        kind: 'alterType',
        table,
        column: column ?? '?',
        type: typeText(rec(col, 'typeName')),
        using: col.raw_default !== undefined,
      });
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
        lock(
          plan,
          refTable,
          'SHARE ROW EXCLUSIVE',
          notValid ? 'instant' : 'scan',
          'a new foreign key takes SHARE ROW EXCLUSIVE on the referenced table',
        );
        plan.changes.push({
          kind: 'addForeignKey',
          table,
          name,
          columns: arr(con, 'fk_attrs').map((a) => sval(a) ?? '?'),
          refTable: refTable ?? '?',
          refColumns: arr(con, 'pk_attrs').map((a) => sval(a) ?? '?'),
          notValid,
        });
      } else if (contype === 'CONSTR_CHECK') {
        plan.changes.push({ kind: 'addCheck', table, name, exprSql: checkText(source, con), notValid });
      } else if (contype === 'CONSTR_UNIQUE' || contype === 'CONSTR_PRIMARY') {
        const usingIndex = str(con, 'indexname') !== undefined;
        plan.changes.push({
          kind: 'addUnique',
          table,
          name,
          columns: arr(con, 'keys').map((k) => sval(k) ?? '?'),
          primary: contype === 'CONSTR_PRIMARY',
          usingIndex,
        });
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
        lock(
          plan,
          partition,
          SUE,
          'instant',
          'DETACH PARTITION CONCURRENTLY takes SHARE UPDATE EXCLUSIVE on the partition',
        );
      } else {
        // ATTACH scans the partition for rows outside the bound unless a valid CHECK already proves it.
        lock(
          plan,
          partition,
          ACCESS_EXCLUSIVE,
          subtype === 'AT_AttachPartition' ? 'scan' : 'instant',
          `${what} takes ACCESS EXCLUSIVE on the partition`,
        );
      }
      break;
    }
    default:
      break;
  }
  lock(plan, table, mode, work, `ALTER TABLE ${what} takes ${mode}`);
}

/**
 * The classifier's rules for statements that change the schema or maintain the database (DDL, VACUUM, REINDEX, …):
 * held, refused when PostgreSQL cannot run them in a transaction block, or held to run alone (SPEC §5.4a).
 */
import { arr, isFalseOption, names, objectLabel, objectName, pushName, rangeVarName, rec, str } from './parseTree';
import type { Rule } from './ruleState';
import { hold, holdOutsideTransaction, NOT_IN_TRANSACTION, refuse } from './ruleState';

/** ALTER TABLE subcommands that lose data or loosen the rules data obeys (SPEC §5.5: CRITICAL). */
const DESTRUCTIVE_ALTER: Record<string, string> = {
  AT_DropColumn: 'drops column',
  AT_DropConstraint: 'drops constraint',
  AT_AlterColumnType: 'changes the type of',
  AT_DropNotNull: 'drops NOT NULL of',
  AT_DropIdentity: 'drops the identity of',
  AT_SetExpression: 'recomputes',
  AT_DropExpression: 'drops the generation expression of',
  AT_DetachPartition: 'detaches a partition',
  AT_DetachPartitionFinalize: 'detaches a partition',
  AT_DropInherit: 'stops inheriting',
};
/** Objects of the whole server rather than of this database's schema: changing them is admin work. */
const SERVER_OBJECTS = new Set(['OBJECT_DATABASE', 'OBJECT_ROLE', 'OBJECT_TABLESPACE']);
const TABLE_LIKE = new Set(['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE']);
/** SPEC §5.4a: these are held for approval (never refused), analysed without running, and run alone. */
const RUNS_ALONE =
  'runs outside a transaction (cannot be rolled back): analysed without running, run alone once approved';

export const SCHEMA_RULES: readonly (readonly [string, Rule])[] = [
  [
    'CreateFunctionStmt',
    (n, ctx, st) => {
      hold(st, 'ddl', `creates ${n.is_procedure === true ? 'procedure' : 'function'} ${names(n.funcname)}`);
      return { ...ctx, top: false, deferred: 'a routine body that', paramsOk: true };
    },
  ],
  [
    'RuleStmt',
    (n, ctx, st) => {
      hold(st, 'ddl', `creates rule ${str(n, 'rulename') ?? ''} on ${rangeVarName(rec(n, 'relation')) ?? '?'}`);
      return { ...ctx, top: false, deferred: 'a rule action that' };
    },
  ],
  [
    'ViewStmt',
    (n, ctx, st) => {
      hold(st, 'ddl', `creates view ${rangeVarName(rec(n, 'view')) ?? '?'}`);
      return { ...ctx, top: false, deferred: 'a view definition that' };
    },
  ],
  [
    'DropStmt',
    (n, _ctx, st) => {
      const type = str(n, 'removeType') ?? 'OBJECT';
      const objects = arr(n, 'objects').map(objectName);
      if (TABLE_LIKE.has(type)) objects.forEach((o) => pushName(st.tables, o));
      st.destructive = true;
      if (n.concurrent === true) holdOutsideTransaction(st, 'ddl', `DROP INDEX CONCURRENTLY ${RUNS_ALONE}`);
      hold(st, 'ddl', `drops ${objectLabel(type).toLowerCase()} ${objects.join(', ')}`);
    },
  ],
  [
    'TruncateStmt',
    (n, _ctx, st) => {
      const targets = arr(n, 'relations').map((r) => rangeVarName(rec(r, 'RangeVar')) ?? '?');
      st.writesTo.push(...targets);
      st.destructive = true;
      const cascade = n.behavior === 'DROP_CASCADE' ? ' and every table referencing it' : '';
      hold(st, 'write', `truncates ${targets.join(', ')}${cascade}`);
    },
  ],
  [
    'AlterTableStmt',
    (n, _ctx, st) => {
      const target = `${objectLabel(str(n, 'objtype') ?? 'OBJECT_TABLE')} ${rangeVarName(rec(n, 'relation')) ?? '?'}`;
      hold(st, 'ddl', `ALTER ${target} changes the schema`);
      for (const item of arr(n, 'cmds')) {
        const cmd = rec(item, 'AlterTableCmd');
        const phrase = DESTRUCTIVE_ALTER[str(cmd, 'subtype') ?? ''];
        const column = str(cmd, 'name');
        if (phrase !== undefined) {
          st.destructive = true;
          hold(st, 'ddl', `ALTER ${target} ${phrase}${column === undefined ? '' : ` ${column}`}`);
        }
        const detach = rec(rec(cmd, 'def'), 'PartitionCmd');
        if (detach?.concurrent === true)
          holdOutsideTransaction(st, 'ddl', `DETACH PARTITION CONCURRENTLY ${RUNS_ALONE}`);
      }
    },
  ],
  [
    'IndexStmt',
    (n, _ctx, st) => {
      if (n.concurrent === true)
        holdOutsideTransaction(
          st,
          'ddl',
          `CREATE INDEX CONCURRENTLY on ${rangeVarName(rec(n, 'relation')) ?? '?'} ${RUNS_ALONE}`,
        );
      else hold(st, 'ddl', `creates an index on ${rangeVarName(rec(n, 'relation')) ?? '?'}`);
    },
  ],
  [
    'ReindexStmt',
    (n, _ctx, st) => {
      const kind = (str(n, 'kind') ?? '').replace('REINDEX_OBJECT_', '');
      const concurrently = arr(n, 'params').some((p) => {
        const def = rec(p, 'DefElem');
        return str(def, 'defname') === 'concurrently' && !isFalseOption(def?.arg);
      });
      if (['SCHEMA', 'SYSTEM', 'DATABASE'].includes(kind)) refuse(st, 'admin', `REINDEX ${kind} ${NOT_IN_TRANSACTION}`);
      else if (concurrently) holdOutsideTransaction(st, 'admin', `REINDEX CONCURRENTLY ${RUNS_ALONE}`);
      else hold(st, 'admin', `REINDEX rebuilds the indexes of ${rangeVarName(rec(n, 'relation')) ?? '?'}`);
    },
  ],
  [
    'VacuumStmt',
    (n, _ctx, st) => {
      if (n.is_vacuumcmd === true) holdOutsideTransaction(st, 'admin', `VACUUM ${RUNS_ALONE}`);
      else hold(st, 'admin', 'ANALYZE recomputes planner statistics');
    },
  ],
  [
    'ClusterStmt',
    (n, _ctx, st) => {
      const target = rangeVarName(rec(n, 'relation'));
      if (target === undefined) refuse(st, 'admin', `CLUSTER without a table ${NOT_IN_TRANSACTION}`);
      else hold(st, 'admin', `CLUSTER rewrites table ${target}`);
    },
  ],
  [
    'DiscardStmt',
    (n, _ctx, st) => {
      const target = (str(n, 'target') ?? '').replace('DISCARD_', '');
      if (target === 'ALL') refuse(st, 'session', `DISCARD ALL ${NOT_IN_TRANSACTION}`);
      else hold(st, 'session', `DISCARD ${target} drops session state`);
    },
  ],
  [
    'RenameStmt',
    (n, _ctx, st) => {
      const type = str(n, 'renameType') ?? 'OBJECT';
      const what = `${objectLabel(type).toLowerCase()} ${str(n, 'subname') ?? ''}`.trimEnd();
      hold(st, SERVER_OBJECTS.has(type) ? 'admin' : 'ddl', `RENAME renames ${what}`);
    },
  ],
  [
    'AlterOwnerStmt',
    (n, _ctx, st) => {
      const type = str(n, 'objectType') ?? 'OBJECT';
      hold(
        st,
        SERVER_OBJECTS.has(type) ? 'admin' : 'ddl',
        `OWNER TO changes the owner of ${objectLabel(type).toLowerCase()}`,
      );
    },
  ],
  [
    'AlterDatabaseStmt',
    (n, _ctx, st) => {
      const moves = arr(n, 'options').some((o) => str(rec(o, 'DefElem'), 'defname') === 'tablespace');
      if (moves) refuse(st, 'admin', `ALTER DATABASE … SET TABLESPACE ${NOT_IN_TRANSACTION}`);
      else hold(st, 'admin', `ALTER DATABASE changes database ${str(n, 'dbname') ?? ''}`);
    },
  ],
  [
    'AlterEnumStmt',
    (n, _ctx, st) => {
      // ADD VALUE is on SPEC §5.4a's list: the new value cannot be used before it commits, so it runs alone.
      if (str(n, 'newVal') !== undefined && str(n, 'oldVal') === undefined)
        holdOutsideTransaction(st, 'ddl', `ALTER TYPE … ADD VALUE ${RUNS_ALONE}`);
      else hold(st, 'ddl', 'ALTER TYPE changes an enum type');
    },
  ],
  [
    'AlterSubscriptionStmt',
    (n, _ctx, st) => {
      if (/REFRESH|PUBLICATION/.test(str(n, 'kind') ?? '')) {
        refuse(st, 'admin', `ALTER SUBSCRIPTION … that refreshes ${NOT_IN_TRANSACTION}`);
      } else {
        hold(st, 'admin', 'ALTER SUBSCRIPTION changes logical replication');
      }
    },
  ],
];

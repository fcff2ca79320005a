/**
 * What each kind of node means for safety (SPEC §5.1): the rules the classifier applies wherever a node
 * is found in a statement's tree, and the verdicts of statements that need no look at their fields.
 */
import { sideEffectOf } from './sideEffectFunctions';
import type { Rule } from './ruleState';
import { hold, NOT_IN_TRANSACTION, refuse } from './ruleState';
import { SCHEMA_RULES } from './schemaRules';
import { arr, isFalseOption, isRec, num, pushName, rangeVarName, rec, str, sval } from './parseTree';

const SELECT_FIELDS = new Set([
  'distinctClause',
  'intoClause',
  'targetList',
  'fromClause',
  'whereClause',
  'groupClause',
  'groupDistinct',
  'havingClause',
  'windowClause',
  'valuesLists',
  'sortClause',
  'limitOffset',
  'limitCount',
  'limitOption',
  'lockingClause',
  'withClause',
  'op',
  'all',
  'larg',
  'rarg',
]);

const EXPLAIN_OPTIONS = new Set([
  'verbose',
  'costs',
  'settings',
  'buffers',
  'serialize',
  'wal',
  'timing',
  'summary',
  'memory',
  'format',
]);
/** Settings that change how the server reads SQL text: after them our parse could differ from the server's. */
const LEXING_SETTINGS = new Set(['client_encoding', 'standard_conforming_strings']);
const LOCK_STRENGTH: Record<string, string> = {
  LCS_FORUPDATE: 'FOR UPDATE',
  LCS_FORNOKEYUPDATE: 'FOR NO KEY UPDATE',
  LCS_FORSHARE: 'FOR SHARE',
  LCS_FORKEYSHARE: 'FOR KEY SHARE',
};
const DML: Record<string, readonly [string, string]> = {
  InsertStmt: ['INSERT', 'inserts rows into'],
  UpdateStmt: ['UPDATE', 'updates rows in'],
  DeleteStmt: ['DELETE', 'deletes rows from'],
  MergeStmt: ['MERGE', 'merges rows into'],
};

function dml(kind: string): Rule {
  const [keyword, verb] = DML[kind] ?? [kind, 'writes to'];
  return (n, ctx, st) => {
    const target = rangeVarName(rec(n, 'relation')) ?? 'a table';
    if (ctx.deferred) return hold(st, 'write', `${ctx.deferred} ${verb} ${target}`);
    const upsert = str(rec(n, 'onConflictClause'), 'action') === 'ONCONFLICT_UPDATE';
    if (ctx.inCte) hold(st, 'write', `writable CTE: ${keyword} inside WITH`);
    hold(st, 'write', `${verb} ${target}${upsert ? ' (updating rows on conflict)' : ''}`);
    st.writesTo.push(target);
    if ((kind === 'UpdateStmt' || kind === 'DeleteStmt') && isTriviallyTrue(n.whereClause)) {
      st.unbounded = true;
      hold(st, 'write', `${keyword} without a WHERE clause affects every row of ${target}`);
    }
  };
}

/** Rules that read the node's fields; they apply wherever the node is found. */
export const RULES = new Map<string, Rule>([
  ['InsertStmt', dml('InsertStmt')],
  ['UpdateStmt', dml('UpdateStmt')],
  ['DeleteStmt', dml('DeleteStmt')],
  ['MergeStmt', dml('MergeStmt')],
  ['RangeVar', (n, _ctx, st) => void pushName(st.tables, rangeVarName(n))],
  [
    'CommonTableExpr',
    (n, ctx, st) => {
      const name = str(n, 'ctename');
      if (name !== undefined) st.cteNames.add(name);
      return { ...ctx, top: false, inCte: true };
    },
  ],
  [
    'ParamRef',
    (n, ctx, st) => {
      if (!ctx.paramsOk) st.params.push({ number: num(n, 'number'), location: num(n, 'location') });
    },
  ],
  [
    'FuncCall',
    (n, ctx, st) => {
      const effect = sideEffectOf(
        arr(n, 'funcname')
          .map(sval)
          .filter((s): s is string => s !== undefined),
      );
      if (!effect) return;
      const prefix = ctx.deferred ? `${ctx.deferred} ` : '';
      const setting = (sval(arr(n, 'args')[0]) ?? '').toLowerCase();
      if (
        /(^|\.)set_config$/i.test(effect.name) &&
        (setting.startsWith('transaction_') || LEXING_SETTINGS.has(setting))
      ) {
        return refuse(
          st,
          'session',
          `${prefix}calls ${effect.name}(), which changes ${setting}, which the agent controls`,
        );
      }
      hold(st, effect.class, `${prefix}calls ${effect.name}(), which ${effect.why}`);
      if (!ctx.deferred) st.sideEffects.push(effect.name);
    },
  ],
  [
    'SelectStmt',
    (n, ctx, st) => {
      const prefix = ctx.deferred ? `${ctx.deferred} ` : '';
      for (const key of Object.keys(n)) {
        if (!SELECT_FIELDS.has(key)) hold(st, 'unknown', `SELECT has a clause the classifier does not know (${key})`);
      }
      const into = rec(n, 'intoClause');
      if (into) hold(st, 'ddl', `${prefix}SELECT INTO creates table ${rangeVarName(rec(into, 'rel')) ?? '?'}`);
      for (const item of arr(n, 'lockingClause')) {
        const lock = rec(item, 'LockingClause');
        const wait = str(lock, 'waitPolicy');
        const how = wait === 'LockWaitError' ? ' NOWAIT' : wait === 'LockWaitSkip' ? ' SKIP LOCKED' : '';
        hold(st, 'write', `${prefix}locks rows (${LOCK_STRENGTH[str(lock, 'strength') ?? ''] ?? 'FOR UPDATE'}${how})`);
      }
    },
  ],
  [
    'ExplainStmt',
    (n, ctx, st) => {
      let analyze = false;
      let generic = false;
      for (const option of arr(n, 'options')) {
        const def = rec(option, 'DefElem');
        const name = (str(def, 'defname') ?? '').toLowerCase();
        if (name === 'analyze' || name === 'analyse') analyze ||= !isFalseOption(def?.arg);
        else if (name === 'generic_plan') generic ||= !isFalseOption(def?.arg);
        else if (!EXPLAIN_OPTIONS.has(name)) hold(st, 'read', `EXPLAIN option ${name} is not known to be harmless`);
      }
      if (!analyze) {
        const deferred = ctx.deferred ?? 'EXPLAIN of a statement that';
        return { ...ctx, top: false, deferred, paramsOk: ctx.paramsOk || generic };
      }
      const inner = isRec(n.query) ? Object.keys(n.query)[0] : undefined;
      hold(st, 'read', `EXPLAIN ANALYZE executes the ${inner === 'SelectStmt' ? 'query' : 'statement'}`);
    },
  ],
  [
    'CopyStmt',
    (n, _ctx, st) => {
      const target = rangeVarName(rec(n, 'relation')) ?? 'a query';
      const file = str(n, 'filename');
      const from = n.is_from === true;
      if (n.is_program === true)
        refuse(st, 'admin', `COPY … PROGRAM runs a shell command on the server (${file ?? ''})`);
      else if (file !== undefined) hold(st, 'admin', `COPY ${from ? 'reads' : 'writes'} the server file ${file}`);
      else if (!from) hold(st, 'read', 'COPY … TO STDOUT is not a read: only SELECT, VALUES, TABLE, SHOW, EXPLAIN are');
      if (from) {
        hold(st, 'write', `COPY FROM loads rows into ${target}`);
        st.writesTo.push(target);
      }
    },
  ],
  [
    'CreateTableAsStmt',
    (n, _ctx, st) => {
      const name = rangeVarName(rec(rec(n, 'into'), 'rel')) ?? '?';
      if (n.is_select_into === true) hold(st, 'ddl', `SELECT INTO creates table ${name}`);
      else if (n.objtype === 'OBJECT_MATVIEW') hold(st, 'ddl', `creates materialized view ${name}`);
      else hold(st, 'ddl', `creates table ${name} from a query`);
    },
  ],
  [
    'TransactionStmt',
    (n, _ctx, st, sql) => {
      const word = (/^[A-Za-z]+/.exec(sql)?.[0] ?? 'transaction control').toUpperCase();
      const kind = (str(n, 'kind') ?? '').replace('TRANS_STMT_', '');
      if (kind === 'COMMIT' || kind === 'ROLLBACK') refuse(st, 'session', `${word} would end the agent's transaction`);
      else if (kind === 'BEGIN' || kind === 'START')
        refuse(st, 'session', `${word} would nest in the agent's transaction`);
      else if (kind === 'PREPARE') refuse(st, 'session', "PREPARE TRANSACTION would detach the agent's transaction");
      else if (kind.endsWith('_PREPARED')) refuse(st, 'session', `${word} … PREPARED ${NOT_IN_TRANSACTION}`);
      else refuse(st, 'session', `${word} takes over transaction control, which belongs to the agent`);
    },
  ],
  [
    'VariableSetStmt',
    (n, ctx, st) => {
      if (!ctx.top) return; // ALTER ROLE … SET, CREATE FUNCTION … SET: the container's rule says what it does
      const name = (str(n, 'name') ?? '').toLowerCase();
      const kind = str(n, 'kind');
      const local = n.is_local === true;
      if (name === 'transaction' || name.startsWith('transaction_')) {
        refuse(st, 'session', "SET TRANSACTION would change the agent's own transaction");
      } else if (name === 'session characteristics') {
        refuse(
          st,
          'session',
          'SET SESSION CHARACTERISTICS changes the mode of every later transaction of the connection',
        );
      } else if (LEXING_SETTINGS.has(name)) {
        refuse(
          st,
          'session',
          `changing ${name} changes how the server reads SQL text, so later checks could not be trusted`,
        );
      } else if (kind === 'VAR_RESET_ALL') {
        hold(st, 'session', 'RESET ALL resets every setting of this session');
      } else if (kind === 'VAR_RESET') {
        hold(st, 'session', `RESET ${name} changes a setting of this session`);
      } else {
        const scope = local ? 'transaction' : 'session';
        hold(st, 'session', `SET ${local ? 'LOCAL ' : ''}${name} changes a setting of this ${scope}`);
      }
    },
  ],
  [
    'PrepareStmt',
    (n, ctx, st) => {
      hold(st, 'session', `PREPARE stores statement ${str(n, 'name') ?? ''} in this session`);
      return { ...ctx, top: false, deferred: 'PREPARE of a statement that', paramsOk: true };
    },
  ],
  ...SCHEMA_RULES,
]);

/** No WHERE clause, or one that is the constant true or `1 = 1`. */
function isTriviallyTrue(where: unknown): boolean {
  if (where === undefined) return true;
  if (rec(rec(where, 'A_Const'), 'boolval')?.boolval === true) return true;
  const expr = rec(where, 'A_Expr');
  if (!expr || sval(arr(expr, 'name')[0]) !== '=') return false;
  const left = rec(expr.lexpr, 'A_Const');
  const right = rec(expr.rexpr, 'A_Const');
  if (!left || !right) return false;
  return JSON.stringify({ ...left, location: 0 }) === JSON.stringify({ ...right, location: 0 });
}

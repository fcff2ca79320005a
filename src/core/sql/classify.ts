/**
 * Says what SQL does (SPEC §5.1) from PostgreSQL's own parse tree: every node of every statement is visited,
 * a read is an allow-list, and anything not recognised is held for approval. Needs loadParser() first.
 */
import { AgentError } from '../errors';
import type { Classification, SqlClass, SqlDecision, StatementClassification } from './classification';
import { parseSql } from './parse';
import type { ParsedInput, ParsedStatement } from './parse';
import { sideEffectOf } from './sideEffectFunctions';

/**
 * From harmless to dangerous. A write changes data that outlives the session, so it ranks above a session
 * change (gone with the connection); DDL changes what every later query means; admin reaches beyond this
 * database's objects (roles, server, files); unknown is what the classifier cannot see into.
 */
export const CLASS_ORDER: readonly SqlClass[] = ['read', 'session', 'write', 'ddl', 'admin', 'unknown'];

type Rec = Record<string, unknown>;
type Rule = (node: Rec, ctx: Ctx, st: State, sql: string) => Ctx | void;

interface Ctx {
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

interface State {
  facts: Fact[];
  kinds: Set<string>;
  tables: string[];
  writesTo: string[];
  cteNames: Set<string>;
  unbounded: boolean;
  destructive: boolean;
  sideEffects: string[];
  params: { number: number; location: number }[];
}

/** Statements that may be reads; they still need a tree of READ_SAFE nodes and no fact against them. */
const READ_TOP = new Set(['SelectStmt', 'VariableShowStmt', 'ExplainStmt']);

/** Plain expressions and references: the only node types a read may hold (FuncCall is checked by name). */
const READ_SAFE = new Set([
  'SelectStmt', 'ResTarget', 'A_Const', 'A_Expr', 'A_Star', 'A_Indices', 'A_Indirection', 'A_ArrayExpr',
  'ColumnRef', 'ParamRef', 'FuncCall', 'NamedArgExpr', 'TypeCast', 'TypeName', 'CollateClause', 'SortBy',
  'WindowDef', 'RangeVar', 'RangeSubselect', 'RangeFunction', 'RangeTableSample', 'RangeTableFunc',
  'RangeTableFuncCol', 'JoinExpr', 'Alias', 'BoolExpr', 'NullTest', 'BooleanTest', 'SubLink', 'CaseExpr',
  'CaseWhen', 'CoalesceExpr', 'MinMaxExpr', 'RowExpr', 'SQLValueFunction', 'XmlExpr', 'XmlSerialize',
  'GroupingSet', 'GroupingFunc', 'WithClause', 'CommonTableExpr', 'CTESearchClause', 'CTECycleClause',
  'String', 'Integer', 'Float', 'Boolean', 'BitString', 'List', 'DefElem', 'JsonObjectConstructor',
  'JsonArrayConstructor', 'JsonArrayQueryConstructor', 'JsonAggConstructor', 'JsonObjectAgg', 'JsonArrayAgg',
  'JsonFuncExpr', 'JsonTable', 'JsonTableColumn', 'JsonTablePathSpec', 'JsonValueExpr', 'JsonFormat',
  'JsonOutput', 'JsonReturning', 'JsonKeyValue', 'JsonParseExpr', 'JsonScalarExpr', 'JsonSerializeExpr',
  'JsonIsPredicate', 'JsonBehavior', 'JsonArgument',
  // Only a name and a type in a read: the column definition list of a record function, f() AS t(a int).
  'ColumnDef',
]);

const SELECT_FIELDS = new Set([
  'distinctClause', 'intoClause', 'targetList', 'fromClause', 'whereClause', 'groupClause', 'groupDistinct',
  'havingClause', 'windowClause', 'valuesLists', 'sortClause', 'limitOffset', 'limitCount', 'limitOption',
  'lockingClause', 'withClause', 'op', 'all', 'larg', 'rarg',
]);

/** Node types of fields that hold a node without the {"Type": …} wrapper (RangeVar is recognised by shape). */
const FIELD_TYPES = new Map([
  ['intoClause', 'IntoClause'], ['into', 'IntoClause'], ['withClause', 'WithClause'], ['larg', 'SelectStmt'],
  ['rarg', 'SelectStmt'], ['onConflictClause', 'OnConflictClause'], ['returningClause', 'ReturningClause'],
  ['funccall', 'FuncCall'], ['over', 'WindowDef'], ['typeName', 'TypeName'], ['alias', 'Alias'],
  ['collClause', 'CollateClause'], ['infer', 'InferClause'], ['search_clause', 'CTESearchClause'],
  ['cycle_clause', 'CTECycleClause'], ['partspec', 'PartitionSpec'], ['partbound', 'PartitionBoundSpec'],
]);

const EXPLAIN_OPTIONS = new Set([
  'verbose', 'costs', 'settings', 'buffers', 'serialize', 'wal', 'timing', 'summary', 'memory', 'format',
]);
/** Settings that change how the server reads SQL text: after them our parse could differ from the server's. */
const LEXING_SETTINGS = new Set(['client_encoding', 'standard_conforming_strings']);
const LOCK_STRENGTH: Record<string, string> = {
  LCS_FORUPDATE: 'FOR UPDATE', LCS_FORNOKEYUPDATE: 'FOR NO KEY UPDATE', LCS_FORSHARE: 'FOR SHARE',
  LCS_FORKEYSHARE: 'FOR KEY SHARE',
};
/** ALTER TABLE subcommands that lose data or loosen the rules data obeys (SPEC §5.5: CRITICAL). */
const DESTRUCTIVE_ALTER: Record<string, string> = {
  AT_DropColumn: 'drops column', AT_DropConstraint: 'drops constraint', AT_AlterColumnType: 'changes the type of',
  AT_DropNotNull: 'drops NOT NULL of', AT_DropIdentity: 'drops the identity of', AT_SetExpression: 'recomputes',
  AT_DropExpression: 'drops the generation expression of', AT_DetachPartition: 'detaches a partition',
  AT_DetachPartitionFinalize: 'detaches a partition', AT_DropInherit: 'stops inheriting',
};
/** Objects of the whole server rather than of this database's schema: changing them is admin work. */
const SERVER_OBJECTS = new Set(['OBJECT_DATABASE', 'OBJECT_ROLE', 'OBJECT_TABLESPACE']);
const TABLE_LIKE = new Set(['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE']);
const NOT_IN_TRANSACTION = 'cannot run inside a transaction block, so it cannot be previewed or rolled back';
const NODE_NAME = /^[A-Z]/;

/** Classifies every statement of the input. Throws like parseSql, and SQL_PLACEHOLDERS for $n without values. */
export function classifySql(input: string): Classification {
  return classifyParsed(parseSql(input));
}

/** Classifies an already parsed input (exported so trees can be tested beyond what the grammar produces). */
export function classifyParsed(parsed: ParsedInput): Classification {
  const results = parsed.statements.map((stmt) => classifyStatement(stmt));
  const params = results.flatMap((r) => r.params).sort((a, b) => a.location - b.location);
  const first = params[0];
  if (first) {
    const position = parsed.indexOfByte(first.location);
    const more = params.length > 1 ? ` (and ${params.length - 1} more)` : '';
    throw new AgentError(
      'SQL_PLACEHOLDERS',
      `The SQL has the placeholder $${first.number} at position ${position}${more} and no values for it.`,
      'Put the values in the SQL',
    );
  }
  const statements = results.map((r) => r.statement);
  const many = statements.length > 1;
  const reasons = many ? [`${statements.length} statements: each is reviewed on its own`] : [];
  for (const reason of statements.flatMap((s) => s.reasons)) if (!reasons.includes(reason)) reasons.push(reason);
  const decision = statements.some((s) => s.decision === 'refuse')
    ? 'refuse'
    : many || statements.some((s) => s.decision === 'approve')
      ? 'approve'
      : 'run';
  return { statements, class: maxClass(statements.map((s) => s.class)), decision, reasons };
}

function classifyStatement(stmt: ParsedStatement): { statement: StatementClassification; params: State['params'] } {
  const st: State = {
    facts: [], kinds: new Set(), tables: [], writesTo: [], cteNames: new Set(),
    unbounded: false, destructive: false, sideEffects: [], params: [],
  };
  walk(stmt, st);
  if (st.facts.length === 0) {
    const odd = [...st.kinds].filter((kind) => !READ_SAFE.has(kind) && !READ_TOP.has(kind));
    if (odd.length > 0) hold(st, 'unknown', `contains ${odd.join(', ')}, which is not part of a plain read`);
    else if (!READ_TOP.has(stmt.kind)) hold(st, 'unknown', `${stmt.kind} is not a statement the classifier knows`);
  }
  const decision: SqlDecision = st.facts.some((f) => f.decision === 'refuse')
    ? 'refuse'
    : st.facts.length > 0
      ? 'approve'
      : 'run';
  const writes = new Set(st.writesTo);
  // A CTE's name read in FROM is not a table (scopes are not tracked: a CTE shadowing a table hides it).
  const tables = unique(st.tables).filter((t) => t.includes('.') || !st.cteNames.has(t) || writes.has(t));
  const statement: StatementClassification = {
    sql: stmt.sql,
    offset: stmt.offset,
    kind: stmt.kind,
    nodeKinds: [...st.kinds].sort(),
    class: st.facts.length === 0 ? 'read' : maxClass(st.facts.map((f) => f.cls)),
    decision,
    reasons: unique(st.facts.map((f) => f.reason)),
    writesTo: unique(st.writesTo),
    tables,
    unboundedWrite: st.unbounded,
    destructive: st.destructive,
    sideEffects: unique(st.sideEffects),
  };
  return { statement, params: st.params };
}

interface Frame {
  value: unknown;
  type: string | undefined;
  ctx: Ctx;
}

/** Depth-first over the whole JSON tree, without recursion (trees can be thousands of levels deep). */
function walk(stmt: ParsedStatement, st: State): void {
  const root: Ctx = { top: true, deferred: undefined, inCte: false, paramsOk: false };
  const stack: Frame[] = [{ value: stmt.tree, type: undefined, ctx: root }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const { value, ctx } = frame;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i] as unknown, type: undefined, ctx });
      continue;
    }
    if (!isRec(value)) continue;
    let kind = frame.type;
    let body = value;
    const keys = Object.keys(value);
    const only = keys.length === 1 ? keys[0] : undefined;
    const wrapped = only === undefined ? undefined : value[only];
    if (only !== undefined && NODE_NAME.test(only) && isRec(wrapped)) {
      kind = only;
      body = wrapped;
    } else if (kind === undefined && typeof value.relname === 'string') {
      kind = 'RangeVar';
    }
    let childCtx: Ctx = ctx.top ? { ...ctx, top: false } : ctx;
    if (kind !== undefined) {
      st.kinds.add(kind);
      const rule = RULES.get(kind);
      const simple = SIMPLE.get(kind);
      if (rule) childCtx = rule(body, ctx, st, stmt.sql) ?? childCtx;
      else if (simple) applySimple(simple, body, st);
    }
    const entries = Object.entries(body);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [field, child] = entries[i] ?? ['', undefined];
      if (typeof child !== 'object' || child === null) continue;
      stack.push({ value: child, type: FIELD_TYPES.get(field), ctx: childCtx });
    }
  }
}

function hold(st: State, cls: SqlClass, reason: string): void {
  st.facts.push({ cls, decision: 'approve', reason });
}

function refuse(st: State, cls: SqlClass, reason: string): void {
  st.facts.push({ cls, decision: 'refuse', reason });
}

const DML: Record<string, readonly [string, string]> = {
  InsertStmt: ['INSERT', 'inserts rows into'], UpdateStmt: ['UPDATE', 'updates rows in'],
  DeleteStmt: ['DELETE', 'deletes rows from'], MergeStmt: ['MERGE', 'merges rows into'],
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
const RULES = new Map<string, Rule>([
  ['InsertStmt', dml('InsertStmt')],
  ['UpdateStmt', dml('UpdateStmt')],
  ['DeleteStmt', dml('DeleteStmt')],
  ['MergeStmt', dml('MergeStmt')],
  ['RangeVar', (n, _ctx, st) => void pushName(st.tables, rangeVarName(n))],
  ['CommonTableExpr', (n, ctx, st) => {
    const name = str(n, 'ctename');
    if (name !== undefined) st.cteNames.add(name);
    return { ...ctx, top: false, inCte: true };
  }],
  ['ParamRef', (n, ctx, st) => {
    if (!ctx.paramsOk) st.params.push({ number: num(n, 'number'), location: num(n, 'location') });
  }],
  ['FuncCall', (n, ctx, st) => {
    const effect = sideEffectOf(arr(n, 'funcname').map(sval).filter((s): s is string => s !== undefined));
    if (!effect) return;
    const prefix = ctx.deferred ? `${ctx.deferred} ` : '';
    const setting = (sval(arr(n, 'args')[0]) ?? '').toLowerCase();
    if (/(^|\.)set_config$/i.test(effect.name) && (setting.startsWith('transaction_') || LEXING_SETTINGS.has(setting))) {
      return refuse(st, 'session', `${prefix}calls ${effect.name}(), which changes ${setting}, which the agent controls`);
    }
    hold(st, effect.class, `${prefix}calls ${effect.name}(), which ${effect.why}`);
    if (!ctx.deferred) st.sideEffects.push(effect.name);
  }],
  ['SelectStmt', (n, ctx, st) => {
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
  }],
  ['ExplainStmt', (n, ctx, st) => {
    let analyze = false;
    let generic = false;
    for (const option of arr(n, 'options')) {
      const def = rec(option, 'DefElem');
      const name = (str(def, 'defname') ?? '').toLowerCase();
      if (name === 'analyze' || name === 'analyse') analyze ||= !isFalse(def?.arg);
      else if (name === 'generic_plan') generic ||= !isFalse(def?.arg);
      else if (!EXPLAIN_OPTIONS.has(name)) hold(st, 'read', `EXPLAIN option ${name} is not known to be harmless`);
    }
    if (!analyze) {
      const deferred = ctx.deferred ?? 'EXPLAIN of a statement that';
      return { ...ctx, top: false, deferred, paramsOk: ctx.paramsOk || generic };
    }
    const inner = isRec(n.query) ? Object.keys(n.query)[0] : undefined;
    hold(st, 'read', `EXPLAIN ANALYZE executes the ${inner === 'SelectStmt' ? 'query' : 'statement'}`);
  }],
  ['CopyStmt', (n, _ctx, st) => {
    const target = rangeVarName(rec(n, 'relation')) ?? 'a query';
    const file = str(n, 'filename');
    const from = n.is_from === true;
    if (n.is_program === true) refuse(st, 'admin', `COPY … PROGRAM runs a shell command on the server (${file ?? ''})`);
    else if (file !== undefined) hold(st, 'admin', `COPY ${from ? 'reads' : 'writes'} the server file ${file}`);
    else if (!from) hold(st, 'read', 'COPY … TO STDOUT is not a read: only SELECT, VALUES, TABLE, SHOW, EXPLAIN are');
    if (from) {
      hold(st, 'write', `COPY FROM loads rows into ${target}`);
      st.writesTo.push(target);
    }
  }],
  ['CreateTableAsStmt', (n, _ctx, st) => {
    const name = rangeVarName(rec(rec(n, 'into'), 'rel')) ?? '?';
    if (n.is_select_into === true) hold(st, 'ddl', `SELECT INTO creates table ${name}`);
    else if (n.objtype === 'OBJECT_MATVIEW') hold(st, 'ddl', `creates materialized view ${name}`);
    else hold(st, 'ddl', `creates table ${name} from a query`);
  }],
  ['TransactionStmt', (n, _ctx, st, sql) => {
    const word = (/^[A-Za-z]+/.exec(sql)?.[0] ?? 'transaction control').toUpperCase();
    const kind = (str(n, 'kind') ?? '').replace('TRANS_STMT_', '');
    if (kind === 'COMMIT' || kind === 'ROLLBACK') refuse(st, 'session', `${word} would end the agent's transaction`);
    else if (kind === 'BEGIN' || kind === 'START') refuse(st, 'session', `${word} would nest in the agent's transaction`);
    else if (kind === 'PREPARE') refuse(st, 'session', "PREPARE TRANSACTION would detach the agent's transaction");
    else if (kind.endsWith('_PREPARED')) refuse(st, 'session', `${word} … PREPARED ${NOT_IN_TRANSACTION}`);
    else refuse(st, 'session', `${word} takes over transaction control, which belongs to the agent`);
  }],
  ['VariableSetStmt', (n, ctx, st) => {
    if (!ctx.top) return; // ALTER ROLE … SET, CREATE FUNCTION … SET: the container's rule says what it does
    const name = (str(n, 'name') ?? '').toLowerCase();
    const kind = str(n, 'kind');
    const local = n.is_local === true;
    if (name === 'transaction' || name.startsWith('transaction_')) {
      refuse(st, 'session', "SET TRANSACTION would change the agent's own transaction");
    } else if (name === 'session characteristics') {
      refuse(st, 'session', 'SET SESSION CHARACTERISTICS changes the mode of every later transaction of the connection');
    } else if (LEXING_SETTINGS.has(name)) {
      refuse(st, 'session', `changing ${name} changes how the server reads SQL text, so later checks could not be trusted`);
    } else if (kind === 'VAR_RESET_ALL') {
      hold(st, 'session', 'RESET ALL resets every setting of this session');
    } else if (kind === 'VAR_RESET') {
      hold(st, 'session', `RESET ${name} changes a setting of this session`);
    } else {
      const scope = local ? 'transaction' : 'session';
      hold(st, 'session', `SET ${local ? 'LOCAL ' : ''}${name} changes a setting of this ${scope}`);
    }
  }],
  ['PrepareStmt', (n, ctx, st) => {
    hold(st, 'session', `PREPARE stores statement ${str(n, 'name') ?? ''} in this session`);
    return { ...ctx, top: false, deferred: 'PREPARE of a statement that', paramsOk: true };
  }],
  ['CreateFunctionStmt', (n, ctx, st) => {
    hold(st, 'ddl', `creates ${n.is_procedure === true ? 'procedure' : 'function'} ${names(n.funcname)}`);
    return { ...ctx, top: false, deferred: 'a routine body that', paramsOk: true };
  }],
  ['RuleStmt', (n, ctx, st) => {
    hold(st, 'ddl', `creates rule ${str(n, 'rulename') ?? ''} on ${rangeVarName(rec(n, 'relation')) ?? '?'}`);
    return { ...ctx, top: false, deferred: 'a rule action that' };
  }],
  ['ViewStmt', (n, ctx, st) => {
    hold(st, 'ddl', `creates view ${rangeVarName(rec(n, 'view')) ?? '?'}`);
    return { ...ctx, top: false, deferred: 'a view definition that' };
  }],
  ['DropStmt', (n, _ctx, st) => {
    const type = str(n, 'removeType') ?? 'OBJECT';
    const objects = arr(n, 'objects').map(objectName);
    if (TABLE_LIKE.has(type)) objects.forEach((o) => pushName(st.tables, o));
    st.destructive = true;
    if (n.concurrent === true) refuse(st, 'ddl', `DROP INDEX CONCURRENTLY ${NOT_IN_TRANSACTION}`);
    hold(st, 'ddl', `drops ${objectLabel(type).toLowerCase()} ${objects.join(', ')}`);
  }],
  ['TruncateStmt', (n, _ctx, st) => {
    const targets = arr(n, 'relations').map((r) => rangeVarName(rec(r, 'RangeVar')) ?? '?');
    st.writesTo.push(...targets);
    st.destructive = true;
    const cascade = n.behavior === 'DROP_CASCADE' ? ' and every table referencing it' : '';
    hold(st, 'write', `truncates ${targets.join(', ')}${cascade}`);
  }],
  ['AlterTableStmt', (n, _ctx, st) => {
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
      if (detach?.concurrent === true) refuse(st, 'ddl', `DETACH PARTITION CONCURRENTLY ${NOT_IN_TRANSACTION}`);
    }
  }],
  ['IndexStmt', (n, _ctx, st) => {
    if (n.concurrent === true) refuse(st, 'ddl', `CREATE INDEX CONCURRENTLY ${NOT_IN_TRANSACTION}`);
    else hold(st, 'ddl', `creates an index on ${rangeVarName(rec(n, 'relation')) ?? '?'}`);
  }],
  ['ReindexStmt', (n, _ctx, st) => {
    const kind = (str(n, 'kind') ?? '').replace('REINDEX_OBJECT_', '');
    const concurrently = arr(n, 'params').some((p) => {
      const def = rec(p, 'DefElem');
      return str(def, 'defname') === 'concurrently' && !isFalse(def?.arg);
    });
    if (concurrently) refuse(st, 'admin', `REINDEX CONCURRENTLY ${NOT_IN_TRANSACTION}`);
    else if (['SCHEMA', 'SYSTEM', 'DATABASE'].includes(kind)) refuse(st, 'admin', `REINDEX ${kind} ${NOT_IN_TRANSACTION}`);
    else hold(st, 'admin', `REINDEX rebuilds the indexes of ${rangeVarName(rec(n, 'relation')) ?? '?'}`);
  }],
  ['VacuumStmt', (n, _ctx, st) => {
    if (n.is_vacuumcmd === true) refuse(st, 'admin', `VACUUM ${NOT_IN_TRANSACTION}`);
    else hold(st, 'admin', 'ANALYZE recomputes planner statistics');
  }],
  ['ClusterStmt', (n, _ctx, st) => {
    const target = rangeVarName(rec(n, 'relation'));
    if (target === undefined) refuse(st, 'admin', `CLUSTER without a table ${NOT_IN_TRANSACTION}`);
    else hold(st, 'admin', `CLUSTER rewrites table ${target}`);
  }],
  ['DiscardStmt', (n, _ctx, st) => {
    const target = (str(n, 'target') ?? '').replace('DISCARD_', '');
    if (target === 'ALL') refuse(st, 'session', `DISCARD ALL ${NOT_IN_TRANSACTION}`);
    else hold(st, 'session', `DISCARD ${target} drops session state`);
  }],
  ['RenameStmt', (n, _ctx, st) => {
    const type = str(n, 'renameType') ?? 'OBJECT';
    const what = `${objectLabel(type).toLowerCase()} ${str(n, 'subname') ?? ''}`.trimEnd();
    hold(st, SERVER_OBJECTS.has(type) ? 'admin' : 'ddl', `RENAME renames ${what}`);
  }],
  ['AlterOwnerStmt', (n, _ctx, st) => {
    const type = str(n, 'objectType') ?? 'OBJECT';
    hold(st, SERVER_OBJECTS.has(type) ? 'admin' : 'ddl', `OWNER TO changes the owner of ${objectLabel(type).toLowerCase()}`);
  }],
  ['AlterDatabaseStmt', (n, _ctx, st) => {
    const moves = arr(n, 'options').some((o) => str(rec(o, 'DefElem'), 'defname') === 'tablespace');
    if (moves) refuse(st, 'admin', `ALTER DATABASE … SET TABLESPACE ${NOT_IN_TRANSACTION}`);
    else hold(st, 'admin', `ALTER DATABASE changes database ${str(n, 'dbname') ?? ''}`);
  }],
  ['AlterSubscriptionStmt', (n, _ctx, st) => {
    if (/REFRESH|PUBLICATION/.test(str(n, 'kind') ?? '')) {
      refuse(st, 'admin', `ALTER SUBSCRIPTION … that refreshes ${NOT_IN_TRANSACTION}`);
    } else {
      hold(st, 'admin', 'ALTER SUBSCRIPTION changes logical replication');
    }
  }],
]);

/** [class, reason, flags] of statements whose verdict does not depend on their fields. */
type Simple = readonly [SqlClass, string, ('refuse' | 'destructive' | 'both')?];

const SIMPLE = new Map<string, Simple>([
  ['CreateStmt', ['ddl', 'CREATE TABLE creates a table']],
  ['CreateSeqStmt', ['ddl', 'CREATE SEQUENCE creates a sequence']],
  ['AlterSeqStmt', ['ddl', 'ALTER SEQUENCE changes a sequence']],
  ['CreateSchemaStmt', ['ddl', 'CREATE SCHEMA creates a schema']],
  ['AlterFunctionStmt', ['ddl', 'ALTER FUNCTION changes a routine']],
  ['CreateExtensionStmt', ['ddl', 'CREATE EXTENSION installs an extension']],
  ['AlterExtensionStmt', ['ddl', 'ALTER EXTENSION updates an extension']],
  ['AlterExtensionContentsStmt', ['ddl', 'ALTER EXTENSION changes what an extension contains']],
  ['CreateDomainStmt', ['ddl', 'CREATE DOMAIN creates a domain']],
  ['AlterDomainStmt', ['ddl', 'ALTER DOMAIN changes a domain']],
  ['CompositeTypeStmt', ['ddl', 'CREATE TYPE creates a type']],
  ['CreateEnumStmt', ['ddl', 'CREATE TYPE creates an enum type']],
  ['CreateRangeStmt', ['ddl', 'CREATE TYPE creates a range type']],
  ['AlterEnumStmt', ['ddl', 'ALTER TYPE changes an enum type']],
  ['AlterTypeStmt', ['ddl', 'ALTER TYPE changes a type']],
  ['DefineStmt', ['ddl', 'CREATE creates a type, operator, aggregate or similar object']],
  ['CreateTrigStmt', ['ddl', 'CREATE TRIGGER makes later writes run a function']],
  ['AlterObjectSchemaStmt', ['ddl', 'SET SCHEMA moves an object to another schema']],
  ['AlterObjectDependsStmt', ['ddl', 'DEPENDS ON EXTENSION changes dependencies']],
  ['AlterOperatorStmt', ['ddl', 'ALTER OPERATOR changes an operator']],
  ['CommentStmt', ['ddl', 'COMMENT changes the comment of an object']],
  ['SecLabelStmt', ['ddl', 'SECURITY LABEL changes a security label']],
  ['GrantStmt', ['ddl', 'GRANT/REVOKE changes privileges']],
  ['CreatePolicyStmt', ['ddl', 'CREATE POLICY changes row-level security']],
  ['AlterPolicyStmt', ['ddl', 'ALTER POLICY changes row-level security']],
  ['CreateStatsStmt', ['ddl', 'CREATE STATISTICS creates extended statistics']],
  ['AlterStatsStmt', ['ddl', 'ALTER STATISTICS changes extended statistics']],
  ['CreateCastStmt', ['ddl', 'CREATE CAST creates a cast']],
  ['CreateConversionStmt', ['ddl', 'CREATE CONVERSION creates an encoding conversion']],
  ['CreateTransformStmt', ['ddl', 'CREATE TRANSFORM creates a transform']],
  ['CreateOpClassStmt', ['ddl', 'CREATE OPERATOR CLASS creates an operator class']],
  ['CreateOpFamilyStmt', ['ddl', 'CREATE OPERATOR FAMILY creates an operator family']],
  ['AlterOpFamilyStmt', ['ddl', 'ALTER OPERATOR FAMILY changes an operator family']],
  ['CreateAmStmt', ['ddl', 'CREATE ACCESS METHOD creates an access method']],
  ['CreatePLangStmt', ['ddl', 'CREATE LANGUAGE installs a procedural language']],
  ['AlterCollationStmt', ['ddl', 'ALTER COLLATION changes a collation']],
  ['AlterTSDictionaryStmt', ['ddl', 'ALTER TEXT SEARCH DICTIONARY changes a dictionary']],
  ['AlterTSConfigurationStmt', ['ddl', 'ALTER TEXT SEARCH CONFIGURATION changes a configuration']],
  ['CreateFdwStmt', ['ddl', 'CREATE FOREIGN DATA WRAPPER creates a wrapper']],
  ['AlterFdwStmt', ['ddl', 'ALTER FOREIGN DATA WRAPPER changes a wrapper']],
  ['CreateForeignServerStmt', ['ddl', 'CREATE SERVER creates a foreign server']],
  ['AlterForeignServerStmt', ['ddl', 'ALTER SERVER changes a foreign server']],
  ['CreateForeignTableStmt', ['ddl', 'CREATE FOREIGN TABLE creates a foreign table']],
  ['CreateUserMappingStmt', ['ddl', 'CREATE USER MAPPING stores remote credentials']],
  ['AlterUserMappingStmt', ['ddl', 'ALTER USER MAPPING changes remote credentials']],
  ['DropUserMappingStmt', ['ddl', 'DROP USER MAPPING drops remote credentials', 'destructive']],
  ['ImportForeignSchemaStmt', ['ddl', 'IMPORT FOREIGN SCHEMA creates foreign tables']],
  ['CreatePublicationStmt', ['ddl', 'CREATE PUBLICATION publishes tables for replication']],
  ['AlterPublicationStmt', ['ddl', 'ALTER PUBLICATION changes a publication']],
  ['CreateRoleStmt', ['admin', 'CREATE ROLE creates a role']],
  ['AlterRoleStmt', ['admin', 'ALTER ROLE changes a role']],
  ['AlterRoleSetStmt', ['admin', 'ALTER ROLE … SET changes the defaults of a role']],
  ['DropRoleStmt', ['admin', 'DROP ROLE drops a role', 'destructive']],
  ['GrantRoleStmt', ['admin', 'GRANT/REVOKE changes role membership']],
  ['AlterDefaultPrivilegesStmt', ['admin', 'ALTER DEFAULT PRIVILEGES changes privileges of future objects']],
  ['ReassignOwnedStmt', ['admin', 'REASSIGN OWNED changes the owner of every object of a role']],
  ['DropOwnedStmt', ['admin', 'DROP OWNED drops every object of a role', 'destructive']],
  ['CheckPointStmt', ['admin', 'CHECKPOINT forces a checkpoint of the server']],
  ['AlterTableSpaceOptionsStmt', ['admin', 'ALTER TABLESPACE changes a tablespace']],
  ['AlterTableMoveAllStmt', ['admin', 'ALTER … ALL IN TABLESPACE moves every relation of a tablespace']],
  ['CreateEventTrigStmt', ['admin', 'CREATE EVENT TRIGGER runs a function on every DDL command']],
  ['AlterEventTrigStmt', ['admin', 'ALTER EVENT TRIGGER changes an event trigger']],
  ['AlterDatabaseSetStmt', ['admin', 'ALTER DATABASE … SET changes the defaults of a database']],
  ['AlterDatabaseRefreshCollStmt', ['admin', 'ALTER DATABASE … REFRESH COLLATION VERSION changes a database']],
  ['CreatedbStmt', ['admin', `CREATE DATABASE ${NOT_IN_TRANSACTION}`, 'refuse']],
  ['DropdbStmt', ['admin', `DROP DATABASE ${NOT_IN_TRANSACTION}`, 'both']],
  ['AlterSystemStmt', ['admin', `ALTER SYSTEM ${NOT_IN_TRANSACTION}`, 'refuse']],
  ['CreateTableSpaceStmt', ['admin', `CREATE TABLESPACE ${NOT_IN_TRANSACTION}`, 'refuse']],
  ['DropTableSpaceStmt', ['admin', `DROP TABLESPACE ${NOT_IN_TRANSACTION}`, 'both']],
  ['LoadStmt', ['admin', 'LOAD loads a shared library into the server process', 'refuse']],
  ['CreateSubscriptionStmt', ['admin', 'CREATE SUBSCRIPTION creates a remote slot no rollback undoes', 'refuse']],
  ['DropSubscriptionStmt', ['admin', 'DROP SUBSCRIPTION drops a remote slot no rollback undoes', 'both']],
  ['RefreshMatViewStmt', ['write', 'REFRESH MATERIALIZED VIEW replaces the contents of a materialized view']],
  ['LockStmt', ['write', 'LOCK TABLE locks tables until the end of the transaction']],
  ['DeclareCursorStmt', ['session', 'DECLARE opens a cursor in this session']],
  ['FetchStmt', ['session', 'FETCH/MOVE moves a cursor of this session']],
  ['ClosePortalStmt', ['session', 'CLOSE closes a cursor of this session']],
  ['DeallocateStmt', ['session', 'DEALLOCATE drops prepared statements of this session']],
  ['ListenStmt', ['session', 'LISTEN subscribes this session to notifications']],
  ['UnlistenStmt', ['session', 'UNLISTEN changes the notifications this session gets']],
  ['NotifyStmt', ['session', 'NOTIFY sends a notification to listening sessions']],
  ['ConstraintsSetStmt', ['session', 'SET CONSTRAINTS changes when constraints are checked']],
  ['DoStmt', ['unknown', 'DO runs a procedural code block the classifier cannot see into']],
  ['CallStmt', ['unknown', 'CALL runs a procedure whose effects the classifier cannot see']],
  ['ExecuteStmt', ['unknown', 'EXECUTE runs a prepared statement whose text the classifier cannot see']],
  ['PLAssignStmt', ['unknown', 'a PL/pgSQL assignment is not a statement the agent runs']],
]);

function applySimple([cls, reason, flags]: Simple, n: Rec, st: State): void {
  // AlterDomainStmt subtypes X and N are DROP CONSTRAINT and DROP NOT NULL.
  const dropsFromDomain = reason.startsWith('ALTER DOMAIN') && (n.subtype === 'X' || n.subtype === 'N');
  if (flags === 'destructive' || flags === 'both' || dropsFromDomain) st.destructive = true;
  if (flags === 'refuse' || flags === 'both') refuse(st, cls, reason);
  else hold(st, cls, reason);
}

/** A boolean option that is certainly false (as PostgreSQL's defGetBoolean reads it); anything else is true. */
function isFalse(arg: unknown): boolean {
  if (arg === undefined) return false;
  const integer = rec(arg, 'Integer');
  if (integer) return (integer.ival ?? 0) === 0;
  const text = str(rec(arg, 'String'), 'sval')?.toLowerCase();
  return text === 'false' || text === 'off';
}

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

function maxClass(classes: SqlClass[]): SqlClass {
  return classes.reduce<SqlClass>((a, b) => (CLASS_ORDER.indexOf(b) > CLASS_ORDER.indexOf(a) ? b : a), 'read');
}

function objectLabel(objectType: string): string {
  return objectType.replace('OBJECT_', '').replace('MATVIEW', 'MATERIALIZED VIEW').replaceAll('_', ' ');
}

function objectName(node: unknown): string {
  const list = rec(node, 'List');
  if (list) return names(list.items);
  const withArgs = rec(node, 'ObjectWithArgs');
  if (withArgs) return names(withArgs.objname);
  const type = rec(node, 'TypeName');
  if (type) return names(type.names);
  return sval(node) ?? '?';
}

function names(items: unknown): string {
  return (Array.isArray(items) ? items : []).map((i) => sval(i) ?? '?').join('.');
}

function rangeVarName(rv: Rec | undefined): string | undefined {
  const relname = str(rv, 'relname');
  if (relname === undefined) return undefined;
  const schema = str(rv, 'schemaname');
  return schema === undefined ? relname : `${schema}.${relname}`;
}

function pushName(list: string[], name: string | undefined): void {
  if (name !== undefined) list.push(name);
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

function isRec(value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The field `key` of a record, if it is a record: also how a wrapped node is opened (rec(node, 'RangeVar')). */
function rec(value: unknown, key: string): Rec | undefined {
  if (!isRec(value)) return undefined;
  const field = value[key];
  return isRec(field) ? field : undefined;
}

function str(value: Rec | undefined, key: string): string | undefined {
  const field = value?.[key];
  return typeof field === 'string' ? field : undefined;
}

function num(value: Rec, key: string): number {
  const field = value[key];
  return typeof field === 'number' ? field : 0;
}

function arr(value: Rec | undefined, key: string): unknown[] {
  const field = value?.[key];
  return Array.isArray(field) ? (field as unknown[]) : [];
}

/** The text of a String node ({"String": {"sval": …}}) or of a string A_Const. */
function sval(node: unknown): string | undefined {
  return str(rec(node, 'String'), 'sval') ?? str(rec(rec(node, 'A_Const'), 'sval'), 'sval');
}

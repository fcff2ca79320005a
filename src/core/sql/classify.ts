/**
 * Says what SQL does (SPEC §5.1) from PostgreSQL's own parse tree: every node of every statement is visited,
 * a read is an allow-list, and anything not recognised is held for approval. Needs loadParser() first.
 */
import { AgentError } from '../platform/errors';
import type { Classification, SqlClass, SqlDecision, StatementClassification } from './classification';
import { parseSql } from './parse';
import type { ParsedInput, ParsedStatement } from './parse';
import { isRec, unique } from './parseTree';
import type { Ctx, State } from './ruleState';
import { hold, refuse } from './ruleState';
import { clearSecretOf } from './secrets/clearSecrets';
import { RULES } from './statementRules';
import { SIMPLE, applySimple } from './simpleStatements';

/**
 * From harmless to dangerous. A write changes data that outlives the session, so it ranks above a session
 * change (gone with the connection); DDL changes what every later query means; admin reaches beyond this
 * database's objects (roles, server, files); unknown is what the classifier cannot see into.
 */
export const CLASS_ORDER: readonly SqlClass[] = ['read', 'session', 'write', 'ddl', 'admin', 'unknown'];

/** Statements that may be reads; they still need a tree of READ_SAFE nodes and no fact against them. */
const READ_TOP = new Set(['SelectStmt', 'VariableShowStmt', 'ExplainStmt']);

/** Plain expressions and references: the only node types a read may hold (FuncCall is checked by name). */
const READ_SAFE = new Set([
  'SelectStmt',
  'ResTarget',
  'A_Const',
  'A_Expr',
  'A_Star',
  'A_Indices',
  'A_Indirection',
  'A_ArrayExpr',
  'ColumnRef',
  'ParamRef',
  'FuncCall',
  'NamedArgExpr',
  'TypeCast',
  'TypeName',
  'CollateClause',
  'SortBy',
  'WindowDef',
  'RangeVar',
  'RangeSubselect',
  'RangeFunction',
  'RangeTableSample',
  'RangeTableFunc',
  'RangeTableFuncCol',
  'JoinExpr',
  'Alias',
  'BoolExpr',
  'NullTest',
  'BooleanTest',
  'SubLink',
  'CaseExpr',
  'CaseWhen',
  'CoalesceExpr',
  'MinMaxExpr',
  'RowExpr',
  'SQLValueFunction',
  'XmlExpr',
  'XmlSerialize',
  'GroupingSet',
  'GroupingFunc',
  'WithClause',
  'CommonTableExpr',
  'CTESearchClause',
  'CTECycleClause',
  'String',
  'Integer',
  'Float',
  'Boolean',
  'BitString',
  'List',
  'DefElem',
  'JsonObjectConstructor',
  'JsonArrayConstructor',
  'JsonArrayQueryConstructor',
  'JsonAggConstructor',
  'JsonObjectAgg',
  'JsonArrayAgg',
  'JsonFuncExpr',
  'JsonTable',
  'JsonTableColumn',
  'JsonTablePathSpec',
  'JsonValueExpr',
  'JsonFormat',
  'JsonOutput',
  'JsonReturning',
  'JsonKeyValue',
  'JsonParseExpr',
  'JsonScalarExpr',
  'JsonSerializeExpr',
  'JsonIsPredicate',
  'JsonBehavior',
  'JsonArgument',
  // Only a name and a type in a read: the column definition list of a record function, f() AS t(a int).
  'ColumnDef',
]);

/** Node types of fields that hold a node without the {"Type": …} wrapper (RangeVar is recognised by shape). */
const FIELD_TYPES = new Map([
  ['intoClause', 'IntoClause'],
  ['into', 'IntoClause'],
  ['withClause', 'WithClause'],
  ['larg', 'SelectStmt'],
  ['rarg', 'SelectStmt'],
  ['onConflictClause', 'OnConflictClause'],
  ['returningClause', 'ReturningClause'],
  ['funccall', 'FuncCall'],
  ['over', 'WindowDef'],
  ['typeName', 'TypeName'],
  ['alias', 'Alias'],
  ['collClause', 'CollateClause'],
  ['infer', 'InferClause'],
  ['search_clause', 'CTESearchClause'],
  ['cycle_clause', 'CTECycleClause'],
  ['partspec', 'PartitionSpec'],
  ['partbound', 'PartitionBoundSpec'],
]);

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
  const alone = statements.find((s) => !s.transactional);
  if (many && alone) {
    // It runs outside any transaction: together with others, a failure half-way could not be rolled back.
    alone.decision = 'refuse';
    reasons.push(
      `${alone.kind.replace(/Stmt$/, '')} runs outside a transaction and must be sent alone, not with other statements`,
    );
  }
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
    facts: [],
    kinds: new Set(),
    tables: [],
    writesTo: [],
    cteNames: new Set(),
    unbounded: false,
    destructive: false,
    sideEffects: [],
    params: [],
    transactional: true,
  };
  walk(stmt, st);
  const secret = clearSecretOf(stmt);
  if (secret !== undefined) refuse(st, 'admin', secret);
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
    transactional: st.transactional,
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

export function maxClass(classes: SqlClass[]): SqlClass {
  return classes.reduce<SqlClass>((a, b) => (CLASS_ORDER.indexOf(b) > CLASS_ORDER.indexOf(a) ? b : a), 'read');
}

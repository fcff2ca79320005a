/**
 * The walker (SPEC §5 1a): from one statement tree, top-level or from a function body, everything that runs
 * the database's code: function calls, operators, casts and types, views (expanded), RLS policies, server-file
 * catalog views, and, through statementReach.ts, the code behind writes and DDL. Findings go to ctx.found.
 */
import type { CodeCast, CodeFunction, CodeRelation } from './codeCatalog';
import { functionLabel, relationLabel } from './codeCatalog';
import type { WalkCtx, WalkEngine } from './walkPort';
import { builtinProblem, chain } from './reachFound';
import type { Judgement } from './reachFound';
import { onStatement, SKIP_CHILDREN } from './statementReach';
import { sideEffectOf } from '../sideEffectFunctions';
import type { Rec } from '../parseTree';
import { arr, isRec, rec, str, sval, walkObjects } from '../parseTree';

export const MAX_DEPTH = 12;
const BUILTIN_SCHEMAS = new Set(['pg_catalog', 'information_schema']);
/** Catalog views that read the server's own files (SPEC §5 1a: privileged), with the function behind each. */
const FILE_VIEWS = new Map<string, readonly [fn: string, file: string]>([
  ['pg_hba_file_rules', ['pg_hba_file_rules', 'pg_hba.conf']],
  ['pg_ident_file_mappings', ['pg_ident_file_mappings', 'pg_ident.conf']],
  ['pg_file_settings', ['pg_show_all_file_settings', 'configuration files']],
]);
/** The functions behind those views → the file they read. */
export const FILE_FUNCTIONS = new Map([...FILE_VIEWS.values()].map(([fn, file]) => [fn, file]));
const NODE_NAME = /^[A-Z]/;

/** Walks a tree (any node or list), without recursion: statements can nest thousands of levels. */
export function walkTree(engine: WalkEngine, root: unknown, ctx: WalkCtx): void {
  walkObjects(root, (value) => {
    const keys = Object.keys(value);
    const only = keys.length === 1 ? keys[0] : undefined;
    let kind: string | undefined;
    let body: Rec = value;
    if (only !== undefined && NODE_NAME.test(only) && isRec(value[only])) {
      kind = only;
      body = value[only];
    } else if (typeof value.relname === 'string') {
      kind = 'RangeVar';
    }
    if (kind !== undefined && visit(engine, kind, body, ctx)) return [];
    const children: unknown[] = [];
    for (const [field, child] of Object.entries(body)) {
      if (typeof child !== 'object' || child === null) continue;
      // CallStmt keeps its FuncCall unwrapped.
      children.push(field === 'funccall' && isRec(child) ? { FuncCall: child } : child);
    }
    return children;
  });
}

/** Handles one node; true when its children must not be walked (they do not run). */
function visit(engine: WalkEngine, kind: string, node: Rec, ctx: WalkCtx): boolean {
  switch (kind) {
    case 'FuncCall':
      onFuncCall(engine, node, ctx);
      return false;
    case 'A_Expr':
      onOperator(engine, arr(node, 'name'), str(node, 'kind') ?? '', ctx);
      return false;
    case 'SubLink':
      // x = ANY (SELECT …), (a, b) < ALL (…): the operator is named on the SubLink.
      onOperator(engine, arr(node, 'operName'), '', ctx);
      return false;
    case 'SortBy':
      // ORDER BY x USING <<<
      onOperator(engine, arr(node, 'useOp'), '', ctx);
      return false;
    case 'DoStmt':
      onDoBlock(engine, node, ctx);
      return true;
    case 'TypeCast':
      onTypeName(engine, rec(node, 'typeName'), ctx);
      return false;
    case 'RangeVar':
      onRelationRead(engine, node, ctx);
      return false;
    default:
      if (kind.endsWith('Stmt')) onStatement(engine, kind, node, ctx);
      return SKIP_CHILDREN.has(kind);
  }
}

/** The non-built-in overloads a name may call, and whether a built-in of that name may be called instead. */
function resolveFunction(
  engine: WalkEngine,
  parts: string[],
  argCount: number,
): { user: CodeFunction[]; builtin: boolean } {
  const name = (parts[parts.length - 1] ?? '').toLowerCase();
  const schema = parts.length > 1 ? parts[parts.length - 2] : undefined;
  if (schema !== undefined && BUILTIN_SCHEMAS.has(schema.toLowerCase())) return { user: [], builtin: true };
  const all = engine.catalog.functionsByName.get(name) ?? [];
  // Unqualified names may match any schema: a false hold beats a miss.
  const user = schema === undefined ? all : all.filter((f) => f.schema === schema);
  // A user overload with as many arguments shadows the built-in in judgement; otherwise the built-in may run.
  const builtin = user.length === 0 || !user.some((f) => argumentCount(f) === argCount);
  return { user, builtin };
}

function argumentCount(fn: CodeFunction): number {
  return fn.args.trim() === '' ? 0 : fn.args.split(',').length;
}

function onFuncCall(engine: WalkEngine, node: Rec, ctx: WalkCtx): void {
  const parts = arr(node, 'funcname').map((p) => sval(p) ?? '');
  const args = arr(node, 'args');
  const { user, builtin } = resolveFunction(engine, parts, args.length);
  for (const fn of user) reachFunction(engine, fn, ctx.via, ctx);
  if (builtin) reachBuiltinByName(parts, args, ctx);
}

/** Reaches a catalog function (by oid: operators, casts, triggers…), judged and memoized by the engine. */
export function reachFunction(
  engine: WalkEngine,
  fn: CodeFunction,
  via: string,
  ctx: WalkCtx,
  quietIfSafe = false,
): void {
  const judgement = engine.judge(fn);
  if (quietIfSafe && judgement.problems.length === 0 && judgement.entries.length === 0) return;
  ctx.found.reach(functionLabel(fn), via, judgement, { builtin: fn.builtin, isFunction: true });
}

export function reachFunctionOid(
  engine: WalkEngine,
  oid: number,
  via: string,
  ctx: WalkCtx,
  quietIfSafe = false,
): void {
  const fn = engine.catalog.functions.get(oid);
  if (fn) reachFunction(engine, fn, via, ctx, quietIfSafe);
  else ctx.found.problem('unknown', `runs function ${oid} (${via}), which the catalog does not show`);
}

function reachBuiltinByName(parts: string[], args: unknown[], ctx: WalkCtx): void {
  const name = (parts[parts.length - 1] ?? '').toLowerCase();
  const label = `pg_catalog.${name}(…)`;
  const file = FILE_FUNCTIONS.get(name);
  if (file !== undefined) {
    ctx.found.reach(label, ctx.via, privileged(file), { builtin: true, isFunction: true });
    return;
  }
  const effect = sideEffectOf(parts);
  if (!effect) return;
  if ((name === 'nextval' || name === 'setval') && args.length > 0) {
    const written = constantText(args[0]);
    const sequence =
      written !== undefined && !written.includes('.')
        ? (ctx.sequences?.find((q) => q.endsWith(`.${written}`)) ?? written)
        : written;
    if (sequence !== undefined) {
      const what = name === 'nextval' ? `advances the sequence ${sequence}` : `sets the sequence ${sequence}`;
      ctx.found.reach(
        label,
        ctx.via,
        { problems: [{ kind: 'sequence', what }], entries: [], sequences: [sequence] },
        { builtin: true, isFunction: true },
      );
      return;
    }
  }
  // set_config(…, …, true) is local to the transaction: ROLLBACK undoes it.
  if (name === 'set_config' && isTrue(args[2])) return;
  const problem = builtinProblem(effect);
  if (problem)
    ctx.found.reach(
      label,
      ctx.via,
      { problems: [problem], entries: [], sequences: [] },
      { builtin: true, isFunction: true },
    );
}

function privileged(file: string): Judgement {
  return { problems: [{ kind: 'privileged', what: `reads the server's ${file}` }], entries: [], sequences: [] };
}

/** The text of a string constant, also under casts ('s'::regclass). */
export function constantText(node: unknown): string | undefined {
  const cast = rec(node, 'TypeCast');
  return cast ? constantText(cast.arg) : sval(node);
}

function isTrue(node: unknown): boolean {
  const value = rec(rec(node, 'A_Const'), 'boolval');
  if (value) return value.boolval === true;
  return ['true', 't', 'on', 'yes'].includes((constantText(node) ?? '').toLowerCase());
}

function onOperator(engine: WalkEngine, name: unknown[], kind: string, ctx: WalkCtx): void {
  const parts = name.map((p) => sval(p) ?? '');
  if (parts.length === 0) return;
  const symbols =
    kind.startsWith('AEXPR_BETWEEN') || kind.startsWith('AEXPR_NOT_BETWEEN')
      ? ['>=', '<=']
      : [parts[parts.length - 1] ?? ''];
  const schema = parts.length > 1 ? parts[parts.length - 2] : undefined;
  for (const symbol of symbols) {
    for (const op of engine.catalog.operatorsByName.get(symbol) ?? []) {
      if (schema !== undefined && op.schema !== schema) continue;
      const via = chain(ctx.via, `operator ${op.schema}.${op.name} (${op.left ?? 'none'}, ${op.right ?? 'none'})`);
      // Extension operators match every use of their symbol (=, <, …): listed only when they do something.
      reachFunctionOid(engine, op.code, via, ctx, true);
    }
  }
}

const DO_TAG = '$reach_do$';

/** An anonymous code block (DO): a PL/pgSQL one is judged like a function body; any other language is unknown. */
function onDoBlock(engine: WalkEngine, node: Rec, ctx: WalkCtx): void {
  const option = (name: string): unknown =>
    arr(node, 'args')
      .map((a) => rec(a, 'DefElem'))
      .find((d) => str(d, 'defname') === name)?.arg;
  const body = sval(option('as'));
  const language = (sval(option('language')) ?? 'plpgsql').toLowerCase();
  const judgement =
    body === undefined || language !== 'plpgsql' || body.includes(DO_TAG)
      ? {
          problems: [{ kind: 'unknown' as const, what: `runs a ${language} block we cannot see into` }],
          entries: [],
          sequences: [],
        }
      : engine.judgeBlock(
          `CREATE FUNCTION pg_temp.do_block() RETURNS void LANGUAGE plpgsql AS ${DO_TAG}${body}${DO_TAG}`,
        );
  ctx.found.reach('DO block', ctx.via, judgement, { builtin: false, isFunction: false });
}

/** A cast to a type or a value of a type: the type's I/O functions, its domain checks, user casts to it. */
export function onTypeName(engine: WalkEngine, typeName: Rec | undefined, ctx: WalkCtx): void {
  const parts = arr(typeName, 'names').map((p) => sval(p) ?? '');
  const name = (parts[parts.length - 1] ?? '').toLowerCase();
  const schema = parts.length > 1 ? parts[parts.length - 2] : undefined;
  for (const cast of engine.catalog.castsByTargetName.get(name) ?? []) reachCast(engine, cast, ctx);
  if (schema !== undefined && BUILTIN_SCHEMAS.has(schema)) return;
  for (const type of engine.catalog.typesByName.get(name) ?? []) {
    if (schema === undefined || type.schema === schema) reachType(engine, type.oid, ctx);
  }
}

function reachCast(engine: WalkEngine, cast: CodeCast, ctx: WalkCtx): void {
  reachFunctionOid(engine, cast.func, chain(ctx.via, `cast to ${cast.targetName}`), ctx, true);
}

/** What runs for a value of a user type: a domain's checks (and its base type's), a base type's I/O. */
export function reachType(
  engine: WalkEngine,
  oid: number,
  ctx: WalkCtx,
  checks = true,
  seen = new Set<number>(),
): void {
  const type = engine.catalog.types.get(oid);
  if (!type || seen.has(oid)) return;
  seen.add(oid);
  const label = `${type.schema}.${type.name}`;
  if (type.type === 'd') {
    // Domain checks run when a value is made (cast, write), not when it is read.
    if (checks)
      for (const check of type.checks)
        walkExpression(engine, check, { ...ctx, via: chain(ctx.via, `check of domain ${label}`) });
    if (type.baseType !== null) reachType(engine, type.baseType, ctx, checks, seen);
    return;
  }
  for (const io of type.io) reachFunctionOid(engine, io, chain(ctx.via, `input/output of type ${label}`), ctx, true);
}

/** Walks an expression stored in the catalog (default, check, policy), parsed once per code version. */
export function walkExpression(engine: WalkEngine, expr: string, ctx: WalkCtx): void {
  if (ctx.depth >= MAX_DEPTH) {
    engine.boundHit();
    ctx.found.problem('unknown', `reaches code nested deeper than ${MAX_DEPTH} levels (${ctx.via})`);
    return;
  }
  const tree = engine.parseExpression(expr);
  if (tree instanceof Error)
    ctx.found.problem('unknown', `has an expression that does not parse (${ctx.via}): ${tree.message}`);
  else walkTree(engine, tree, { ...ctx, depth: ctx.depth + 1 });
}

/** The relations a RangeVar may name (unqualified: any schema). */
export function relationsNamed(engine: WalkEngine, node: Rec): CodeRelation[] {
  const name = str(node, 'relname') ?? '';
  const schema = str(node, 'schemaname');
  const all = engine.catalog.relationsByName.get(name.toLowerCase()) ?? [];
  return all.filter((r) => r.name === name && (schema === undefined || r.schema === schema));
}

function onRelationRead(engine: WalkEngine, node: Rec, ctx: WalkCtx): void {
  const name = str(node, 'relname') ?? '';
  const schema = str(node, 'schemaname');
  const file = FILE_VIEWS.get(name);
  if (file && (schema === undefined || schema === 'pg_catalog')) {
    const via = chain(ctx.via, `view pg_catalog.${name}`);
    ctx.found.reach(`pg_catalog.${file[0]}()`, via, privileged(file[1]), { builtin: true, isFunction: true });
  }
  for (const rel of relationsNamed(engine, node)) readRelation(engine, rel, ctx);
}

/** What reading a relation runs: a view's query, RLS policies (USING), I/O and casts of user-typed columns. */
export function readRelation(engine: WalkEngine, rel: CodeRelation, ctx: WalkCtx, viewVerb = 'view'): void {
  const key = `r:${rel.oid}:${ctx.via}:${viewVerb}`;
  if (ctx.seen.has(key)) return;
  ctx.seen.add(key);
  const label = relationLabel(rel);
  if (rel.kind === 'v' || (rel.kind === 'm' && viewVerb !== 'view')) {
    if (rel.viewDef !== null) walkStored(engine, rel.viewDef, { ...ctx, via: chain(ctx.via, `${viewVerb} ${label}`) });
  }
  if (rel.kind === 'f')
    ctx.found.problem(
      'unknown',
      `reads the foreign table ${label} through its foreign-data wrapper (code we cannot see into)`,
    );
  if (rel.rowSecurity) {
    for (const policy of rel.policies) {
      if (policy.using !== null && (policy.command === 'r' || policy.command === '*')) {
        walkExpression(engine, policy.using, { ...ctx, via: chain(ctx.via, `policy ${policy.name} on ${label}`) });
      }
    }
  }
  reachColumnTypes(engine, rel, ctx, false);
}

/**
 * User base types and domains of the relation's columns (I/O; domain checks when `written`), and user
 * implicit or assignment casts from those types (they run without a cast in the SQL).
 */
export function reachColumnTypes(engine: WalkEngine, rel: CodeRelation, ctx: WalkCtx, written: boolean): void {
  for (const column of rel.columns) {
    const via = chain(ctx.via, `column ${relationLabel(rel)}.${column.name}`);
    if (engine.catalog.types.has(column.typeOid)) reachType(engine, column.typeOid, { ...ctx, via }, written);
    for (const cast of engine.catalog.castsBySource.get(column.typeOid) ?? []) {
      if (cast.context !== 'e') reachCast(engine, cast, { ...ctx, via });
    }
  }
}

/** Walks stored statement text (a view's query, a rule's actions) parsed once per code version. */
export function walkStored(engine: WalkEngine, sql: string, ctx: WalkCtx): void {
  if (ctx.depth >= MAX_DEPTH) {
    engine.boundHit();
    ctx.found.problem('unknown', `reaches code nested deeper than ${MAX_DEPTH} levels (${ctx.via})`);
    return;
  }
  const trees = engine.parseStatements(sql);
  if (trees instanceof Error)
    ctx.found.problem('unknown', `has SQL that does not parse (${ctx.via}): ${trees.message}`);
  else walkTree(engine, trees, { ...ctx, depth: ctx.depth + 1 });
}

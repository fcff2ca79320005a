/**
 * Walks a PL/pgSQL function (libpg-query's plpgsql_funcs tree, SPEC §5 1a): every embedded SQL text — plain
 * statements, PERFORM, assignments, conditions of IF/WHILE/CASE/ASSERT, RETURN QUERY, FOR … IN query,
 * OPEN … FOR, cursor declarations, defaults of variables — is parsed with libpg-query and walked like a
 * top-level statement; EXECUTE of a string constant is parsed too; EXECUTE of anything else is unknown code;
 * COMMIT/ROLLBACK in a procedure is what ROLLBACK cannot undo.
 */
import type { WalkCtx, WalkEngine } from './walkPort';
import { constantText, walkTree } from './reachWalk';
import { rec, str, walkObjects } from '../parseTree';
import type { Rec } from '../parseTree';

const DYNAMIC = 'runs SQL built at run time (dynamic EXECUTE)';

/** Walks the tree of parsePlPgSqlFunction (any PL/pgSQL node), adding what it finds to ctx.found. */
export function walkPlpgsql(engine: WalkEngine, tree: unknown, ctx: WalkCtx): void {
  walkObjects(tree, (value) => {
    const expr = rec(value, 'PLpgSQL_expr');
    if (expr) {
      staticSql(engine, expr, ctx);
      return [];
    }
    let node: Rec = value;
    const dynexecute = rec(value, 'PLpgSQL_stmt_dynexecute') ?? rec(value, 'PLpgSQL_stmt_dynfors');
    if (dynexecute) {
      dynamicSql(engine, dynexecute.query, ctx);
      node = { ...dynexecute, query: undefined };
    }
    const withDynamic = rec(value, 'PLpgSQL_stmt_open') ?? rec(value, 'PLpgSQL_stmt_return_query');
    if (withDynamic?.dynquery !== undefined) {
      dynamicSql(engine, withDynamic.dynquery, ctx);
      node = { ...withDynamic, dynquery: undefined };
    }
    if (rec(value, 'PLpgSQL_stmt_commit'))
      ctx.found.problem('irreversible', 'commits the transaction (COMMIT in a procedure)');
    if (rec(value, 'PLpgSQL_stmt_rollback'))
      ctx.found.problem('irreversible', 'ends the transaction (ROLLBACK in a procedure)');
    return Object.values(node).filter((child) => typeof child === 'object' && child !== null);
  });
}

/** The SQL text of an embedded expression, as a statement libpg-query can parse. */
export function embeddedSql(expr: Rec): string {
  const query = str(expr, 'query') ?? '';
  const mode = typeof expr.parseMode === 'number' ? expr.parseMode : 0;
  if (mode === 0) return query;
  if (mode === 2) return `SELECT ${query}`;
  // Assignments ("x := expr", "r.f[1] = expr"): the value is what runs. Subscripts of the target are not walked.
  const assign = query.indexOf(':=');
  const at = assign >= 0 ? assign + 2 : query.indexOf('=') + 1;
  return `SELECT ${query.slice(at)}`;
}

function staticSql(engine: WalkEngine, expr: Rec, ctx: WalkCtx): void {
  const sql = embeddedSql(expr);
  const trees = engine.parseStatements(sql);
  if (trees instanceof Error)
    ctx.found.problem('unknown', `has SQL that does not parse (${abbreviate(sql)}): ${trees.message}`);
  else walkTree(engine, trees, ctx);
}

/** EXECUTE of a string constant is parsed and walked; of anything else it is unknown code. */
function dynamicSql(engine: WalkEngine, query: unknown, ctx: WalkCtx): void {
  const expr = rec(query, 'PLpgSQL_expr');
  if (!expr) return;
  const trees = engine.parseStatements(embeddedSql(expr));
  const select = trees instanceof Error ? undefined : rec(trees[0], 'SelectStmt');
  const list = Array.isArray(select?.targetList) ? (select.targetList as unknown[]) : [];
  const only = list.length === 1 ? rec(list[0], 'ResTarget')?.val : undefined;
  const text = only === undefined ? undefined : constantText(only);
  if (text === undefined) {
    ctx.found.problem('unknown', DYNAMIC);
    return;
  }
  const inner = engine.parseStatements(text);
  if (inner instanceof Error)
    ctx.found.problem('unknown', `runs SQL that does not parse (EXECUTE '${abbreviate(text)}'): ${inner.message}`);
  else walkTree(engine, inner, ctx);
}

function abbreviate(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 57)}…` : flat;
}

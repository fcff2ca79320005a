/**
 * Judging one function (SPEC §5 1a): built-ins by the side-effect list; LANGUAGE sql and plpgsql by parsing
 * and walking their bodies; aggregates by their support functions; every other language is unknown code,
 * except contrib extensions on the allow-list. Settings that override the preview's time limits are flagged.
 * Memoized, bounded and cycle-safe in WalkEngine.judge.
 */
import type { CodeFunction } from './codeCatalog';
import { functionLabel } from './codeCatalog';
import { walkPlpgsql } from './plpgsqlBody';
import type { WalkCtx, WalkEngine } from './walkPort';
import { Found, builtinProblem } from './reachFound';
import type { Judgement } from './reachFound';
import { FILE_FUNCTIONS, reachFunctionOid, walkExpression, walkTree } from './reachWalk';
import { trustedExtensionCode } from './trustedExtensionCode';
import { parsePlPgSqlFunction } from '../parse';
import { rec } from '../parseTree';
import { sideEffectOf } from '../sideEffectFunctions';

/** Settings a function may SET for its body that would let it outlive the preview's limits (SPEC §5 4a). */
const TIME_LIMITS = new Set(['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout']);

export function bodyCtx(owner: string): WalkCtx {
  return { found: new Found(true, owner), via: '', depth: 0, seen: new Set() };
}

/** The judgement of a function, computed (not memoized: see WalkEngine.judge). */
export function judgeFunction(engine: WalkEngine, fn: CodeFunction): Judgement {
  const label = functionLabel(fn);
  const ctx = bodyCtx(label);
  const found = ctx.found;
  if (fn.builtin) {
    const file = FILE_FUNCTIONS.get(fn.name);
    if (file !== undefined) {
      found.problem('privileged', `reads the server's ${file}`);
      return found.judgement();
    }
    const effect = sideEffectOf([fn.schema, fn.name]);
    const problem = effect && builtinProblem(effect);
    if (problem) found.problem(problem.kind, problem.what);
    return found.judgement();
  }
  for (const setting of fn.config) {
    const name = setting.split('=')[0]?.trim().toLowerCase() ?? '';
    if (TIME_LIMITS.has(name))
      found.problem('irreversible', `overrides the preview's time limits for its body (SET ${setting})`);
  }
  if (fn.argumentDefaults !== null) walkExpression(engine, fn.argumentDefaults, { ...ctx, via: 'default argument' });
  if (fn.kind === 'a') {
    for (const part of fn.aggregateParts) reachFunctionOid(engine, part, `support function of aggregate ${label}`, ctx);
    return found.judgement();
  }
  if (fn.language === 'sql') judgeSql(engine, fn, ctx);
  else if (fn.language === 'plpgsql') judgePlpgsqlText(engine, fn.def, ctx);
  else {
    // C and other languages: the side-effect list first (dblink, lo_*, pg_prewarm are extensions too).
    const effect = sideEffectOf([fn.schema, fn.name]);
    const problem = effect && builtinProblem(effect);
    if (problem) found.problem(problem.kind, problem.what);
    else if (effect === undefined && trustedExtensionCode(fn.extension, fn.name) === undefined) {
      found.problem(
        'unknown',
        `is written in ${fn.language}${fn.extension ? ` (extension ${fn.extension})` : ''}, code we cannot see into`,
      );
    }
  }
  return found.judgement();
}

function judgeSql(engine: WalkEngine, fn: CodeFunction, ctx: WalkCtx): void {
  if (fn.src !== null && fn.src.trim() !== '') {
    judgeSqlText(engine, fn.src, ctx);
    return;
  }
  // A SQL-standard body (BEGIN ATOMIC … END, RETURN …) keeps prosrc empty: its definition is parsed instead.
  if (fn.def === null) {
    ctx.found.problem('unknown', 'has a body that could not be read');
    return;
  }
  const trees = engine.parseStatements(fn.def);
  const create = trees instanceof Error ? undefined : rec(trees[0], 'CreateFunctionStmt');
  if (!create)
    ctx.found.problem('unknown', `has a body that does not parse${trees instanceof Error ? `: ${trees.message}` : ''}`);
  else walkTree(engine, create.sql_body, ctx);
}

/** A LANGUAGE sql body (one or more statements) walked as a function body. */
export function judgeSqlText(engine: WalkEngine, src: string, ctx: WalkCtx): void {
  const trees = engine.parseStatements(src);
  if (trees instanceof Error) ctx.found.problem('unknown', `has a body that does not parse: ${trees.message}`);
  else walkTree(engine, trees, ctx);
}

/** A whole CREATE FUNCTION … LANGUAGE plpgsql text (pg_get_functiondef) walked as a function body. */
export function judgePlpgsqlText(engine: WalkEngine, def: string | null, ctx: WalkCtx): void {
  if (def === null) {
    ctx.found.problem('unknown', 'has a body that could not be read');
    return;
  }
  let tree: unknown;
  try {
    tree = parsePlPgSqlFunction(def);
  } catch (error) {
    const message = error instanceof Error ? error.message.trim() : String(error);
    ctx.found.problem('unknown', `has a body that does not parse: ${message}`);
    return;
  }
  walkPlpgsql(engine, tree, ctx);
}

/** What a rule's condition and actions run (pg_get_ruledef text), walked as a body of the rule. */
export function judgeRule(engine: WalkEngine, def: string): Judgement {
  return engine.ruleJudgement(def, () => {
    const ctx = bodyCtx('');
    const trees = engine.parseStatements(def);
    const rule = trees instanceof Error ? undefined : rec(trees[0], 'RuleStmt');
    if (!rule) ctx.found.problem('unknown', 'has a definition that does not parse');
    else walkTree(engine, [rule.whereClause, rule.actions], ctx);
    return ctx.found.judgement();
  });
}

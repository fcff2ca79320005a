/**
 * What a write to a table runs (SPEC §5 1a): triggers whose events match (INSTEAD OF on views), rules for the
 * event, column defaults, identity sequences, generated columns, CHECK and domain checks, index expressions
 * and predicates, RLS policies, and FK actions on the tables that reference it (ON DELETE/UPDATE CASCADE,
 * SET NULL, SET DEFAULT), recursively and bounded, with `via` naming the chain.
 */
import type { CodeRelation, CodeTrigger } from './codeCatalog';
import { relationLabel } from './codeCatalog';
import type { WalkCtx, WalkEngine, WriteEvent, WriteOptions } from './walkPort';
import { chain } from './reachFound';
import { MAX_DEPTH, reachColumnTypes, reachFunctionOid, walkExpression, walkTree } from './reachWalk';
import { judgeRule } from './judgeFunction';
import { rec } from '../parseTree';

const EVENT_BIT: Record<WriteEvent, number> = { INSERT: 4, DELETE: 8, UPDATE: 16, TRUNCATE: 32 };
const RULE_EVENT: Partial<Record<WriteEvent, string>> = { UPDATE: '2', INSERT: '3', DELETE: '4' };
const POLICY_COMMAND: Record<WriteEvent, string> = { INSERT: 'a', UPDATE: 'w', DELETE: 'd', TRUNCATE: '' };
const FK_ACTION: Record<string, string> = { c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

export function triggerLabel(trigger: CodeTrigger, rel: CodeRelation, event: WriteEvent): string {
  const timing = trigger.type & 64 ? 'INSTEAD OF' : trigger.type & 2 ? 'BEFORE' : 'AFTER';
  return `trigger ${trigger.name} on ${relationLabel(rel)} (${timing} ${event}, ${trigger.type & 1 ? 'row' : 'statement'})`;
}

/** Everything a write of `event` to `rel` runs, reached from ctx.via. */
export function applyWrite(
  engine: WalkEngine,
  rel: CodeRelation,
  event: WriteEvent,
  ctx: WalkCtx,
  options: WriteOptions = {},
): void {
  const key = `w:${rel.oid}:${event}`;
  if (ctx.seen.has(key)) return;
  ctx.seen.add(key);
  if (ctx.depth >= MAX_DEPTH) {
    engine.boundHit();
    ctx.found.problem('unknown', `reaches writes nested deeper than ${MAX_DEPTH} levels (${ctx.via})`);
    return;
  }
  const label = relationLabel(rel);
  const inner: WalkCtx = { ...ctx, depth: ctx.depth + 1 };
  if (rel.kind === 'f')
    ctx.found.problem(
      'unknown',
      `writes the foreign table ${label} through its foreign-data wrapper (code we cannot see into)`,
    );
  for (const trigger of rel.triggers) {
    if ((trigger.type & EVENT_BIT[event]) === 0) continue;
    const via = chain(ctx.via, triggerLabel(trigger, rel, event));
    if (trigger.def !== null) walkTriggerCondition(engine, trigger.def, { ...inner, via });
    reachFunctionOid(engine, trigger.func, via, inner);
  }
  const ruleEvent = RULE_EVENT[event];
  for (const rule of rel.rules) {
    if (rule.event !== ruleEvent) continue;
    const via = chain(ctx.via, `ON ${event}`);
    ctx.found.reach(`rule ${rule.name} on ${label}`, via, judgeRule(engine, rule.def), {
      builtin: false,
      isFunction: false,
    });
  }
  if (rel.kind === 'v') {
    // An auto-updatable view writes its base table: that table's code runs too.
    if (
      rel.triggers.some((t) => t.type & 64 && t.type & EVENT_BIT[event]) ||
      rel.rules.some((r) => r.event === ruleEvent)
    )
      return;
    for (const base of viewBaseTables(engine, rel))
      applyWrite(engine, base, event, { ...inner, via: chain(ctx.via, `view ${label}`) }, {});
    return;
  }
  if (event === 'INSERT' || event === 'UPDATE') writeRow(engine, rel, event, inner, options);
  if (rel.rowSecurity) {
    for (const policy of rel.policies) {
      if (policy.command !== '*' && policy.command !== POLICY_COMMAND[event]) continue;
      const via = chain(ctx.via, `policy ${policy.name} on ${label}`);
      for (const expr of [policy.using, policy.withCheck])
        if (expr !== null) walkExpression(engine, expr, { ...inner, via });
    }
  }
  if (event === 'DELETE' || event === 'UPDATE') foreignKeyActions(engine, rel, event, inner);
  if (event === 'TRUNCATE' && options.cascade) {
    for (const fk of rel.referencedBy) {
      applyWrite(
        engine,
        fk.referencing,
        'TRUNCATE',
        { ...inner, via: chain(ctx.via, `TRUNCATE CASCADE from ${label}`) },
        { cascade: true },
      );
    }
  }
  for (const child of rel.children)
    applyWrite(engine, child, event, { ...inner, via: chain(ctx.via, `partition or child of ${label}`) }, options);
}

/** A row inserted or updated: defaults, identity sequences, generated columns, checks, domains, indexes. */
function writeRow(
  engine: WalkEngine,
  rel: CodeRelation,
  event: 'INSERT' | 'UPDATE',
  ctx: WalkCtx,
  options: WriteOptions,
): void {
  const label = relationLabel(rel);
  for (const column of rel.columns) {
    const runsDefault =
      event === 'INSERT'
        ? !(options.givenColumns?.has(column.name) ?? false)
        : (options.defaultColumns?.has(column.name) ?? false);
    const via = chain(ctx.via, `${column.generated ? 'generated column' : 'default of'} ${label}.${column.name}`);
    if (column.defaultExpr !== null && (column.generated || runsDefault)) {
      walkExpression(engine, column.defaultExpr, { ...ctx, via, sequences: column.defaultSequences });
    }
    if (column.identitySequence !== null && runsDefault) {
      ctx.found.sequence(column.identitySequence, chain(ctx.via, `identity column ${label}.${column.name}`));
    }
  }
  for (const check of rel.checks)
    walkExpression(engine, check, { ...ctx, via: chain(ctx.via, `check constraint on ${label}`) });
  reachColumnTypes(engine, rel, ctx, true);
  reachIndexes(engine, rel, ctx);
}

/**
 * Index expressions and predicates of a relation, and the functions of user operator classes its indexes use:
 * evaluated for rows written, and by REINDEX, CLUSTER, ANALYZE.
 */
export function reachIndexes(engine: WalkEngine, rel: CodeRelation, ctx: WalkCtx): void {
  const label = relationLabel(rel);
  for (const { def, opclasses } of rel.indexes) {
    for (const oid of opclasses) {
      const opclass = engine.catalog.opclasses.get(oid);
      const via = chain(
        ctx.via,
        `operator class ${opclass?.schema ?? '?'}.${opclass?.name ?? oid} of an index on ${label}`,
      );
      for (const fn of opclass?.functions ?? []) reachFunctionOid(engine, fn, via, ctx, true);
    }
    if (def === null) continue;
    const trees = engine.parseStatements(def);
    const index = trees instanceof Error ? undefined : rec(trees[0], 'IndexStmt');
    if (!index) {
      ctx.found.problem('unknown', `has an index on ${label} whose definition does not parse`);
      continue;
    }
    walkTree(engine, [index.indexParams, index.whereClause], { ...ctx, via: chain(ctx.via, `index on ${label}`) });
  }
}

function foreignKeyActions(engine: WalkEngine, rel: CodeRelation, event: 'DELETE' | 'UPDATE', ctx: WalkCtx): void {
  for (const fk of rel.referencedBy) {
    const action = event === 'DELETE' ? fk.onDelete : fk.onUpdate;
    const name = FK_ACTION[action];
    if (name === undefined) continue;
    const via = chain(ctx.via, `ON ${event} ${name} from ${relationLabel(rel)}`);
    const next: WriteEvent = event === 'DELETE' && action === 'c' ? 'DELETE' : 'UPDATE';
    // SET DEFAULT runs the referencing columns' defaults: all of them, to stay on the safe side.
    const defaults = action === 'd' ? new Set(fk.referencing.columns.map((c) => c.name)) : undefined;
    applyWrite(engine, fk.referencing, next, { ...ctx, via }, defaults ? { defaultColumns: defaults } : {});
  }
}

/** The relations a view reads in its top-level FROM (where an auto-updatable view's writes go). */
function viewBaseTables(engine: WalkEngine, view: CodeRelation): CodeRelation[] {
  if (view.viewDef === null) return [];
  const trees = engine.parseStatements(view.viewDef);
  if (trees instanceof Error) return [];
  const select = rec(trees[0], 'SelectStmt');
  const from = Array.isArray(select?.fromClause) ? select.fromClause : [];
  return from.flatMap((item) => {
    const rv = rec(item, 'RangeVar');
    if (!rv) return [];
    const name = typeof rv.relname === 'string' ? rv.relname : '';
    const schema = typeof rv.schemaname === 'string' ? rv.schemaname : undefined;
    return (engine.catalog.relationsByName.get(name.toLowerCase()) ?? []).filter(
      (r) => r.name === name && (schema === undefined || r.schema === schema),
    );
  });
}

/** A trigger's WHEN condition runs for each row too. */
function walkTriggerCondition(engine: WalkEngine, def: string, ctx: WalkCtx): void {
  const trees = engine.parseStatements(def);
  const trigger = trees instanceof Error ? undefined : rec(trees[0], 'CreateTrigStmt');
  if (!trigger) ctx.found.problem('unknown', `has a trigger condition that does not parse (${ctx.via})`);
  else walkTree(engine, trigger.whenClause, ctx);
}

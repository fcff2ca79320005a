/**
 * The lock model (SPEC §5.4a): for each DDL or maintenance statement, the lock each relation gets, how long
 * it is held relative to the table's size, and the changes later steps check against the catalog (rewrite,
 * would-fail, dependents, lint). Read from the parse tree only (the planners: statementLocks.ts and
 * alterTableLocks.ts); sources are PostgreSQL's documentation of explicit locking and of each command.
 */
import { parseSql } from '../parse';
import { rec } from '../parseTree';
import type { DdlPlan, PlannedLock, PlannedStatement } from './ddlPlan';
import { WORK_ORDER } from './ddlPlan';
import { strongest } from './lockModes';
import { PLANNERS } from './statementLocks';

/** The lock plan of one statement's text (parsed here; a caller holding the parse gives it to planParsed). */
export function planStatement(sql: string): DdlPlan {
  const parsed = parseSql(sql);
  const statement = parsed.statements[0];
  if (!statement) return { kind: 'unknown', locks: [], changes: [], transactional: true, known: false };
  return planParsed({ statement, source: parsed });
}

/** The lock plan of a statement already parsed (its tree is not parsed again). */
export function planParsed({ statement, source }: PlannedStatement): DdlPlan {
  const kind = statement.kind;
  const body = rec(statement.tree, kind) ?? {};
  const plan: DdlPlan = { kind, locks: [], changes: [], transactional: true, known: true };
  const planner = PLANNERS[kind];
  if (planner) planner(body, plan, source);
  else plan.known = false;
  plan.locks = mergeLocks(plan.locks);
  return plan;
}

/** Keeps one lock per relation: the strongest mode and the longest work (what a person must know). */
function mergeLocks(locks: readonly PlannedLock[]): PlannedLock[] {
  const byRelation = new Map<string, PlannedLock>();
  for (const l of locks) {
    const key = `${l.target}:${l.relation}`;
    const seen = byRelation.get(key);
    if (!seen) {
      byRelation.set(key, { ...l });
      continue;
    }
    const mode = strongest(seen.mode, l.mode);
    const work = WORK_ORDER.indexOf(l.work) > WORK_ORDER.indexOf(seen.work) ? l.work : seen.work;
    byRelation.set(key, { ...seen, mode, work, why: mode === seen.mode ? seen.why : l.why });
  }
  return [...byRelation.values()];
}

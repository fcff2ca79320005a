/**
 * What a statement's reach means on each path (SPEC §5 1a): a read with any effect is held; a preview or an
 * EXPLAIN never runs code whose effect ROLLBACK does not undo, or code we cannot see into; risk has a floor.
 * Pure: checkSql.ts and the guards apply these rules, so every path decides the same way.
 */
import type { Classification, SqlClass, StatementClassification } from '../classification';
import { maxClass } from '../classify';
import type { Risk } from '../../../shared/impactReport';
import type { ReachEffect, ReachEffectKind, StatementReach } from '../../../shared/reachTypes';

/** The class a read becomes when its reach does this. */
const CLASS_OF: Record<ReachEffectKind, SqlClass> = {
  write: 'write',
  sequence: 'write',
  ddl: 'ddl',
  irreversible: 'admin',
  privileged: 'admin',
  unknown: 'unknown',
};

/**
 * Effects that must never happen in a preview or while planning: ROLLBACK does not undo them (or we cannot
 * tell), or they lock other objects. Writes and sequences are not among them: a preview's ROLLBACK undoes the
 * rows (sequence values are disclosed), and EXPLAIN's READ ONLY transaction refuses both.
 */
const NOT_RUN_IN_PREVIEW = new Set<ReachEffectKind>(['irreversible', 'unknown', 'ddl', 'privileged']);

/** Effects that stop a preview or an EXPLAIN, worst first; empty when it may run. */
export function blockingEffects(statement: Pick<StatementClassification, 'reachEffects'>): ReachEffect[] {
  return (statement.reachEffects ?? []).filter((e) => NOT_RUN_IN_PREVIEW.has(e.kind));
}

/**
 * The least risk a write whose preview the reach stopped can have: HIGH when it does what ROLLBACK cannot undo
 * (it happens again at execution: the person must see it), MEDIUM when it is only code we cannot see into.
 */
export function reachRiskFloor(statements: readonly Pick<StatementClassification, 'reachEffects'>[]): Risk | undefined {
  const kinds = new Set(statements.flatMap((s) => blockingEffects(s).map((e) => e.kind)));
  if (kinds.size === 0) return undefined;
  return [...kinds].some((k) => k !== 'unknown') ? 'HIGH' : 'MEDIUM';
}

/** The classification with each statement's reach merged in: a read with any effect is held for approval. */
export function mergeReach(classification: Classification, reaches: readonly StatementReach[]): Classification {
  const statements = classification.statements.map((statement, i): StatementClassification => {
    const reach = reaches[i] ?? { entries: [], effects: [], sequences: [] };
    const merged: StatementClassification = {
      ...statement,
      reach: reach.entries,
      reachEffects: reach.effects,
      reachSequences: reach.sequences,
    };
    if (reach.effects.length === 0) return merged;
    const reasons = [...statement.reasons];
    for (const effect of reach.effects) if (!reasons.includes(effect.reason)) reasons.push(effect.reason);
    const wasRead = statement.decision === 'run';
    return {
      ...merged,
      reasons,
      class: maxClass([statement.class, ...reach.effects.map((e) => CLASS_OF[e.kind])]),
      decision: wasRead ? 'approve' : statement.decision,
    };
  });
  const reasons = [...classification.reasons];
  for (const reason of statements.flatMap((s) => s.reasons)) if (!reasons.includes(reason)) reasons.push(reason);
  const decision =
    classification.decision === 'refuse'
      ? 'refuse'
      : statements.some((s) => s.decision !== 'run')
        ? 'approve'
        : classification.decision;
  return { statements, class: maxClass(statements.map((s) => s.class)), decision, reasons };
}

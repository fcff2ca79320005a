/**
 * Verification in code, not in a prompt: every SQL of every proposal is parsed with our classifier; reads
 * are EXPLAINed in a READ ONLY transaction; writes and DDL get the impact analysis (estimate and a preview
 * rolled back — nothing is committed). Each claim of the proposal (kind, objects, rows) the database
 * contradicts is listed as refuted. Feasibility = the share of SQL that parses, explains and stays in scope.
 */
import type { Db } from '../db/db';
import { toAgentError } from '../platform/errors';
import type { Classification } from '../sql/classification';
import { classifySql } from '../sql/classify';
import { analyzeImpact } from '../sql/impact';
import type { ImpactReport } from '../../shared/impactReport';
import type { SafetySettings } from '../sql/safetySettings';
import type { ProposedSql } from './analystSchemas';
import { explainRead } from './gatherContext';
import type { VerifiedSql } from './sessionTypes';

/** A claimed row count this many times off what the database says is refuted. */
const ROWS_OFF_RATIO = 10;

export interface VerifyTarget {
  approachId: string;
  index: number;
  proposal: ProposedSql;
}

export async function verifyProposal(db: Db, target: VerifyTarget, settings: SafetySettings): Promise<VerifiedSql> {
  const { proposal } = target;
  const base = {
    approachId: target.approachId,
    index: target.index,
    sql: proposal.sql,
    purpose: proposal.purpose,
    claimedKind: proposal.kind,
    claimedObjects: proposal.objects,
  };
  let classification: Classification;
  try {
    classification = classifySql(proposal.sql);
  } catch (error) {
    const e = toAgentError(error);
    return {
      ...base,
      class: null,
      parses: false,
      explains: false,
      withinScope: false,
      feasible: false,
      refuted: [`does not parse: ${e.message}`],
      estimatedRows: null,
      exactRows: null,
      risk: null,
      locks: [],
      objects: [],
    };
  }
  const refuted: string[] = [];
  const objects = new Set(classification.statements.flatMap((s) => s.tables).map(normalizeObject));
  let explains = true;
  let estimatedRows: number | null = null;
  let exactRows: number | null = null;
  let risk: VerifiedSql['risk'] = null;
  let locks: string[] = [];

  const kind = classification.class;
  const kindMatches = kind === proposal.kind;
  if (!kindMatches)
    refuted.push(
      `claims to be a ${proposal.kind}, but the parser says ${kind}${classification.reasons[0] ? ` (${classification.reasons[0]})` : ''}`,
    );

  if (classification.decision === 'refuse') {
    explains = false;
    refuted.push(`refused by the safety policy: ${classification.reasons.join('; ')}`);
  } else if (classification.decision === 'run') {
    for (const statement of classification.statements) {
      const explained = await explainRead(db, statement.sql, settings);
      if (explained.error !== null) {
        explains = false;
        refuted.push(`EXPLAIN fails: ${explained.error}`);
      } else {
        const rows = planRows(explained.plan);
        estimatedRows = rows === null ? estimatedRows : (estimatedRows ?? 0) + rows;
      }
    }
  } else {
    try {
      const impact = await analyzeImpact(db, classification, {
        previewTimeoutMs: settings.previewTimeoutMs,
        lockTimeoutMs: settings.lockTimeoutMs,
        policy: settings.policy,
      });
      estimatedRows = impact.estimatedRows;
      exactRows = impact.exactRows;
      risk = impact.risk;
      locks = locksOf(impact);
      for (const t of impact.tables) objects.add(normalizeObject(`${t.schema}.${t.name}`));
      if (impact.wouldFail) {
        explains = false;
        refuted.push(`would fail: ${impact.wouldFail.message} (${impact.wouldFail.code})`);
      }
    } catch (error) {
      explains = false;
      refuted.push(`impact analysis fails: ${toAgentError(error).message}`);
    }
  }

  const claimed = new Set(proposal.objects.map(normalizeObject));
  const unclaimed = [...objects].filter((o) => !claimed.has(o));
  if (unclaimed.length > 0) refuted.push(`touches ${unclaimed.join(', ')}, which the proposal does not claim`);
  const measured = exactRows ?? estimatedRows;
  if (proposal.expectedRows != null && measured !== null && isFarOff(proposal.expectedRows, measured)) {
    refuted.push(
      `claims about ${proposal.expectedRows} rows; the database says ${measured}${exactRows !== null ? ' (exact preview)' : ' (planner estimate)'}`,
    );
  }
  const withinScope = kindMatches && unclaimed.length === 0;
  return {
    ...base,
    class: kind,
    parses: true,
    explains,
    withinScope,
    feasible: explains && withinScope,
    refuted,
    estimatedRows,
    exactRows,
    risk,
    locks,
    objects: [...objects],
  };
}

/** "public.Orders" and "orders" name the same table for scope checks (our schemas are mostly public). */
export function normalizeObject(name: string): string {
  const parts = name.replace(/"/g, '').toLowerCase().split('.');
  return parts.length > 1 && parts[0] === 'public' ? parts.slice(1).join('.') : parts.join('.');
}

function isFarOff(claimed: number, measured: number): boolean {
  const [low, high] = [Math.min(claimed, measured), Math.max(claimed, measured)];
  return high >= 10 && high > Math.max(low, 1) * ROWS_OFF_RATIO;
}

function planRows(plan: unknown): number | null {
  const top = Array.isArray(plan) ? (plan[0] as { Plan?: { 'Plan Rows'?: unknown } } | undefined) : undefined;
  const rows = top?.Plan?.['Plan Rows'];
  return typeof rows === 'number' ? rows : null;
}

/** The lock each table gets, when the impact report names them (newer reports do; older ones say nothing). */
function locksOf(impact: ImpactReport): string[] {
  const withLocks = impact as ImpactReport & { locks?: { table: string; mode: string }[] };
  return (withLocks.locks ?? []).map((l) => `${l.mode} on ${l.table}`);
}

/** The share of verified SQL that is feasible; 1 when nothing was proposed (nothing to refute). */
export function feasibilityOf(items: readonly VerifiedSql[]): number {
  if (items.length === 0) return 1;
  return items.filter((i) => i.feasible).length / items.length;
}

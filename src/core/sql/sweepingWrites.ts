/**
 * Predicates that match (almost) everything (issue 25): an UPDATE or DELETE whose WHERE looks selective but
 * whose preview touched ≥ 95 % of its table's rows, or far more rows than the planner expected, is the
 * classic mistake of an agent (a join that fans out, a NULL comparison, a column an earlier step just set).
 * Each gets a lint finding with the numbers and lifts the risk one level. Counted inside the preview's own
 * transaction, before its ROLLBACK, and only where the estimate says the count is worth it.
 */
import type { DbSession } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import type { LintFindingView, Risk, TableEffect } from '../../shared/impactReport';
import { RISK_ORDER } from '../../shared/impactReport';
import type { StatementClassification } from './classification';
import { quoteQualified } from './tableEffects';

/** What counts as "everything" and as "far off" (RiskPolicy.sweepingWrites; these are the defaults). */
export interface SweepingWriteRules {
  /** Share of a table's rows from which a filtered write matches "almost all" of them. */
  matchesAllShare: number;
  /** Exact rows this many times the planner's estimate or more. */
  estimateFactor: number;
}

export const DEFAULT_SWEEPING_RULES: SweepingWriteRules = { matchesAllShare: 0.95, estimateFactor: 100 };

export const MATCHES_ALL_RULE = 'write-matches-almost-all-rows';
export const ESTIMATE_RULE = 'write-far-above-estimate';
/** Made by a job (core/jobs/phases/jobWriteFindings.ts) and passed in as ImpactOptions.contextLint. */
export const TRUNCATED_READ_RULE = 'planned-from-truncated-read';
export const COLUMN_JUST_SET_RULE = 'where-uses-column-just-set';
/** The findings that lift a write's risk one level (once, however many there are). */
const LIFTING_RULES = new Set([MATCHES_ALL_RULE, ESTIMATE_RULE, TRUNCATED_READ_RULE, COLUMN_JUST_SET_RULE]);

/** Tables up to this many rows are not worth the warning: a WHERE that matches 4 of 4 rows is no surprise. */
const MIN_TABLE_ROWS = 20;
/** Fewer exact rows than this are never "far above" an estimate. */
const MIN_FAR_ROWS = 100;

const FILTERED_KINDS = new Set(['UpdateStmt', 'DeleteStmt']);

/**
 * Findings for the previewed statements, from the effects the preview saw (inside its transaction, so the
 * table as the write left it is counted, and its size before is that plus what it deleted minus what it
 * inserted). `estimatedRows` is the planner's estimate of the direct rows (null: not known).
 */
export async function sweepingWriteFindings(
  session: DbSession,
  statements: readonly StatementClassification[],
  effects: readonly TableEffect[],
  estimatedRows: number | null,
  rules: SweepingWriteRules = DEFAULT_SWEEPING_RULES,
): Promise<LintFindingView[]> {
  // Writes without WHERE are HIGH by their own rule; this is about predicates that look selective.
  const filtered = statements.filter((s) => FILTERED_KINDS.has(s.kind) && !s.unboundedWrite);
  if (filtered.length === 0) return [];
  // A count stopped by the preview's time limit must not fail the preview: no finding then, nothing else lost.
  await session.query('SAVEPOINT pgagent_sweep');
  try {
    const findings = await findingsFor(session, effects, estimatedRows, rules);
    await session.query('RELEASE SAVEPOINT pgagent_sweep');
    return findings;
  } catch (error) {
    await session.query('ROLLBACK TO SAVEPOINT pgagent_sweep');
    if (error instanceof DbQueryError) return [];
    throw error;
  }
}

async function findingsFor(
  session: DbSession,
  effects: readonly TableEffect[],
  estimatedRows: number | null,
  rules: SweepingWriteRules,
): Promise<LintFindingView[]> {
  const findings: LintFindingView[] = [];
  const direct = effects.filter((t) => t.via === 'direct');
  for (const t of direct) {
    const touched = t.updated + t.deleted;
    if (touched === 0) continue;
    const before = await rowsBefore(session, t, touched, rules.matchesAllShare);
    if (before === null || before <= MIN_TABLE_ROWS || touched < before * rules.matchesAllShare) continue;
    const share = (touched / before) * 100;
    findings.push({
      rule: MATCHES_ALL_RULE,
      severity: 'warning',
      message: `matches ${count(touched)} of ${count(before)} rows of ${t.schema}.${t.name} (${share >= 99.995 ? '100' : share.toFixed(share >= 99.9 ? 2 : 1)} %): its WHERE filters (almost) nothing`,
      advice:
        'Check the WHERE clause against the rows you mean (a comparison with NULL, a join that fans out, a column an earlier step just set). If every row is meant, say so without a WHERE.',
    });
  }
  const directRows = direct.reduce((sum, t) => sum + t.inserted + t.updated + t.deleted, 0);
  if (
    estimatedRows !== null &&
    directRows >= MIN_FAR_ROWS &&
    directRows >= Math.max(estimatedRows, 1) * rules.estimateFactor
  ) {
    findings.push({
      rule: ESTIMATE_RULE,
      severity: 'warning',
      message: `changes ${count(directRows)} rows where the planner expected ${count(estimatedRows)} (${Math.round(directRows / Math.max(estimatedRows, 1)).toLocaleString('en-US')}×)`,
      advice:
        'The predicate matches far more than the statistics suggest: check it against the data, and run ANALYZE if the table changed a lot since its statistics were taken.',
    });
  }
  return findings;
}

/**
 * The table's rows before the write, counted exactly only when the planner's size says the write may have
 * touched `share` of it (a count(*) of a big table the write touched a few rows of would cost a full scan).
 */
async function rowsBefore(session: DbSession, t: TableEffect, touched: number, share: number): Promise<number | null> {
  const name = quoteQualified(`${t.schema}.${t.name}`);
  const sized = await session.query<{ rows: number }>(
    `SELECT greatest(c.reltuples, coalesce(s.n_live_tup, 0))::float8 AS rows
     FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = to_regclass($1)`,
    [name],
  );
  const estimate = sized.rows[0]?.rows;
  if (estimate === undefined) return null;
  // Never analysed (reltuples -1) or stale by a factor: count; plainly far below the share: do not.
  if (estimate > 0 && touched < estimate * share * 0.5) return null;
  const counted = await session.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${name}`);
  const after = counted.rows[0]?.n ?? 0;
  return after + t.deleted - t.inserted;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** One risk level up when a write sweeps (almost) everything or far beyond its estimate, or a job's finding says it may be planned wrong, with the reason why. */
export function liftForSweepingWrites(
  risk: Risk,
  findings: readonly LintFindingView[],
): { risk: Risk; reason?: string } {
  const found = findings.filter((f) => LIFTING_RULES.has(f.rule));
  if (found.length === 0 || risk === 'CRITICAL') return { risk };
  const lifted = RISK_ORDER[RISK_ORDER.indexOf(risk) + 1] ?? 'CRITICAL';
  return {
    risk: lifted,
    reason: `it ${found.map((f) => f.message.replace(/: its WHERE filters \(almost\) nothing$/, '')).join(' and ')}: one level up`,
  };
}

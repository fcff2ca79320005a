/**
 * Risk of a write (SPEC §5.5): the one place it is decided. `riskOfWrite` takes everything that rates a write (rows,
 * kind of statement, locks, critical tables, the floor of what could not be previewed, the sweeping-write lift, and
 * a rating the same write already had) and gives its risk with the reasons; impact.ts and the guard's measured
 * transaction both ask it, and nobody changes a risk after it.
 */
import type { Classification } from './classification';
import type { Risk, TableLock } from '../../shared/impactReport';
import { sizeClass } from './ddl/tableSize';
import { RISK_ORDER } from '../../shared/impactReport';
import { blockingEffects } from './reach/reachVerdicts';
import type { SweepingWriteRules } from './sweepingWrites';
import { liftForSweepingWrites } from './sweepingWrites';
import type { LintFindingView } from '../../shared/impactReport';

export interface RiskPolicy {
  /**
   * Rows touched up to which a write is LOW, MEDIUM, HIGH; above `high` it is CRITICAL. For DDL (SPEC §5.4a):
   * a table up to `smallTableRows` is small (locks on it are brief), from `bigTableRows` it is big.
   */
  thresholds: { low: number; medium: number; high: number; smallTableRows: number; bigTableRows: number };
  /** `name` or `schema.name`: writes touching them count one level higher. */
  criticalTables: readonly string[];
  /** Writes (class 'write' only) up to this risk run without a person; 'none' = every write asks. */
  autoApproveMaxRisk: Risk | 'none';
  /** Issue 25: when a filtered write matches (almost) every row, or far more than estimated (default 95 %, 100×). */
  sweepingWrites?: SweepingWriteRules;
}

export const DEFAULT_RISK_POLICY: RiskPolicy = {
  thresholds: { low: 10, medium: 100, high: 1000, smallTableRows: 10_000, bigTableRows: 1_000_000 },
  criticalTables: [],
  autoApproveMaxRisk: 'none',
};

export interface RiskInput {
  classification: Classification;
  /** Rows inserted + updated + deleted in all tables (exact when previewed, else the estimate). */
  rows: number;
  /** Every table touched, "schema.name". */
  tables: readonly string[];
  /** DDL and maintenance: the locks taken, with the table's size, and the tables rewritten. */
  ddl?: {
    locks: readonly Pick<TableLock, 'table' | 'blocks' | 'work' | 'rows' | 'bytes'>[];
    rewrites: readonly string[];
  };
}

/** What rates a write beyond its rows, kind, locks and tables. */
export interface WriteRiskInput extends RiskInput {
  /** The least risk of what could not be previewed (HIGH, or MEDIUM for code we only cannot see into). */
  floor?: Risk;
  /** Findings that lift it one level: sweeping writes (the preview's lint) and a caller's context findings. */
  lifting?: readonly LintFindingView[];
  /** A risk the same write was already rated (the guard's preview, before its measured run): never below it. */
  atLeast?: Risk;
}

/** The risk of a write and why: assessRisk, then the floor, the sweeping-write lift and `atLeast`, in that order. */
export function riskOfWrite(input: WriteRiskInput, policy: RiskPolicy): { risk: Risk; reasons: string[] } {
  const assessed = assessRisk(input, policy);
  const reasons = [...assessed.reasons];
  let risk = assessed.risk;
  if (input.floor !== undefined && RISK_ORDER.indexOf(risk) < RISK_ORDER.indexOf(input.floor)) {
    risk = input.floor;
    reasons.push(
      input.floor === 'HIGH'
        ? 'its effect could not be measured beforehand, so it is at least HIGH'
        : 'it runs code that could not be looked into, so it is at least MEDIUM',
    );
  }
  const lifted = liftForSweepingWrites(risk, input.lifting ?? []);
  risk = lifted.risk;
  if (lifted.reason) reasons.push(lifted.reason);
  if (input.atLeast !== undefined && RISK_ORDER.indexOf(risk) < RISK_ORDER.indexOf(input.atLeast)) risk = input.atLeast;
  return { risk, reasons };
}

export function assessRisk(input: RiskInput, policy: RiskPolicy): { risk: Risk; reasons: string[] } {
  const { thresholds } = policy;
  const reasons: string[] = [];
  let level =
    input.rows <= thresholds.low ? 0 : input.rows <= thresholds.medium ? 1 : input.rows <= thresholds.high ? 2 : 3;
  const statements = input.classification.statements;
  if (statements.some((s) => s.destructive)) {
    level = 3;
    reasons.push('DROP, TRUNCATE or a destructive ALTER is always CRITICAL');
  }
  for (const finding of ddlRisk(input.ddl, policy)) {
    if (finding.level > level) {
      level = finding.level;
      reasons.push(finding.reason);
    }
  }
  if (statements.some((s) => s.unboundedWrite) && level < 2) {
    level = 2;
    reasons.push('UPDATE or DELETE without WHERE is at least HIGH');
  }
  const critical = input.tables.filter((t) => isCritical(t, policy.criticalTables));
  if (critical.length > 0 && level < 3) {
    level += 1;
    reasons.push(`touches critical table${critical.length > 1 ? 's' : ''} ${critical.join(', ')}: one level up`);
  }
  return { risk: RISK_ORDER[level] ?? 'CRITICAL', reasons };
}

/**
 * Risk = lock × size × rewrite (SPEC §5.5 refined by §5.4a): a rewrite of a big table is CRITICAL (of a
 * medium one HIGH); a lock that blocks reads or writes held for a scan of a big table is at least HIGH (of
 * a medium one MEDIUM); a scan under a lock that blocks nothing, on a big table, MEDIUM. Catalog-only
 * changes and anything on a small table add nothing (LOW). Decision: a brief ACCESS EXCLUSIVE on a big
 * table (catalog change) stays LOW; its lint warns about waiting behind long queries instead.
 */
function ddlRisk(ddl: RiskInput['ddl'], policy: RiskPolicy): { level: number; reason: string }[] {
  if (!ddl) return [];
  const found: { level: number; reason: string }[] = [];
  for (const lock of ddl.locks) {
    const size = sizeClass({ rows: lock.rows, bytes: lock.bytes ?? 0 }, policy.thresholds);
    if (size === 'small' || lock.work === 'instant') continue;
    const sized = `${size} table ${lock.table}`;
    if (lock.work === 'rewrite' && lock.blocks !== 'nothing') {
      found.push({
        level: size === 'big' ? 3 : 2,
        reason: `it rewrites the ${sized} while blocking its ${lock.blocks}`,
      });
    } else if (lock.blocks !== 'nothing') {
      found.push({
        level: size === 'big' ? 2 : 1,
        reason: `it blocks ${lock.blocks} of the ${sized} while it reads every row`,
      });
    } else if (size === 'big') {
      found.push({ level: 1, reason: `it reads all of the ${sized} (without blocking reads or writes)` });
    }
  }
  return found.sort((a, b) => b.level - a.level);
}

function isCritical(table: string, critical: readonly string[]): boolean {
  const bare = table.includes('.') ? table.slice(table.indexOf('.') + 1) : table;
  return critical.some((c) => c === table || c === bare || (!table.includes('.') && c.endsWith(`.${table}`)));
}

/** Whether a person must approve: always, unless the policy auto-approves plain data writes up to a risk. */
export function requiresApproval(classification: Classification, risk: Risk, policy: RiskPolicy): boolean {
  if (policy.autoApproveMaxRisk === 'none') return true;
  // Only plain data changes may skip a person; DDL, session, admin and unknown statements always ask.
  if (classification.statements.some((s) => s.class !== 'write')) return true;
  // Code that was not previewed (it does what ROLLBACK cannot undo, or cannot be looked into) always asks.
  if (classification.statements.some((s) => blockingEffects(s).length > 0)) return true;
  return RISK_ORDER.indexOf(risk) > RISK_ORDER.indexOf(policy.autoApproveMaxRisk);
}

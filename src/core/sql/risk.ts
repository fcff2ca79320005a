/** Risk of a write (SPEC §5.5), from the rows it touches in all tables and what kind of statement it is. */
import type { Classification } from './classification';
import type { Risk } from './impactReport';
import { RISK_ORDER } from './impactReport';

export interface RiskPolicy {
  /** Rows touched up to which a write is LOW, MEDIUM, HIGH; above `high` it is CRITICAL. */
  thresholds: { low: number; medium: number; high: number };
  /** `name` or `schema.name`: writes touching them count one level higher. */
  criticalTables: readonly string[];
  /** Writes (class 'write' only) up to this risk run without a person; 'none' = every write asks. */
  autoApproveMaxRisk: Risk | 'none';
}

export const DEFAULT_RISK_POLICY: RiskPolicy = {
  thresholds: { low: 10, medium: 100, high: 1000 },
  criticalTables: [],
  autoApproveMaxRisk: 'none',
};

export interface RiskInput {
  classification: Classification;
  /** Rows inserted + updated + deleted in all tables (exact when previewed, else the estimate). */
  rows: number;
  /** Every table touched, "schema.name". */
  tables: readonly string[];
}

export function assessRisk(input: RiskInput, policy: RiskPolicy): { risk: Risk; reasons: string[] } {
  const { thresholds } = policy;
  const reasons: string[] = [];
  let level = input.rows <= thresholds.low ? 0 : input.rows <= thresholds.medium ? 1 : input.rows <= thresholds.high ? 2 : 3;
  const statements = input.classification.statements;
  if (statements.some((s) => s.destructive)) {
    level = 3;
    reasons.push('DROP, TRUNCATE or a destructive ALTER is always CRITICAL');
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

function isCritical(table: string, critical: readonly string[]): boolean {
  const bare = table.includes('.') ? table.slice(table.indexOf('.') + 1) : table;
  return critical.some((c) => c === table || c === bare || (!table.includes('.') && c.endsWith(`.${table}`)));
}

/** Whether a person must approve: always, unless the policy auto-approves plain data writes up to a risk. */
export function requiresApproval(classification: Classification, risk: Risk, policy: RiskPolicy): boolean {
  if (policy.autoApproveMaxRisk === 'none') return true;
  // Only plain data changes may skip a person; DDL, session, admin and unknown statements always ask.
  if (classification.statements.some((s) => s.class !== 'write')) return true;
  return RISK_ORDER.indexOf(risk) > RISK_ORDER.indexOf(policy.autoApproveMaxRisk);
}

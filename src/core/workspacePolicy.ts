/**
 * One policy per workspace (issue 12): the approval, risk and planning policy of `.pgagent/config.json`
 * applies to every tool that works on the workspace — the CLI, the extension, jobs, teammates. What a person
 * set for themselves (VS Code settings, CLI flags) is the base underneath; the workspace file wins where it
 * speaks, so the same SQL gets the same risk and the same approval rule wherever it was typed.
 */
import type { PlanningSettings } from './jobs/jobRunner';
import type { RiskPolicy } from './sql/risk';
import { DEFAULT_RISK_POLICY } from './sql/risk';
import type { SafetySettings } from './sql/safetySettings';
import type { WorkspaceConfig } from './workspace';
import { approvalRulesOf } from './workspace';

export function resolveSafety(config: WorkspaceConfig, base: SafetySettings): SafetySettings {
  const { approval, safety } = config;
  const given = safety?.riskThresholds;
  // Thresholds the workspace sets are completed with the defaults, not the person's own: one policy.
  const thresholds = given
    ? { ...DEFAULT_RISK_POLICY.thresholds, ...(Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<RiskPolicy['thresholds']>) }
    : base.policy.thresholds;
  const approvalRules = approvalRulesOf(config);
  return {
    ...base,
    ...(approvalRules ? { approvalRules } : {}),
    policy: {
      thresholds,
      criticalTables: safety?.criticalTables ?? base.policy.criticalTables,
      autoApproveMaxRisk: approval?.autoApproveMaxRisk ?? base.policy.autoApproveMaxRisk,
    },
  };
}

export function resolvePlanning(config: WorkspaceConfig, base: PlanningSettings): PlanningSettings {
  return {
    interactive: config.planning?.interactive ?? base.interactive,
    maxReviewCycles: config.planning?.maxReviewCycles ?? base.maxReviewCycles,
  };
}

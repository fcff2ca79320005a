/**
 * A person's own defaults from VS Code settings (postgresAgent.*), without importing vscode, so a test can
 * check that the extension and the CLI compute the same policy for one workspace (core/workspacePolicy.ts).
 */
import type { PlanningSettings } from '../core/jobs/jobRunner';
import type { Risk } from '../core/sql/impactReport';
import type { SafetySettings } from '../core/sql/safetySettings';

/** `WorkspaceConfiguration.get` of the postgresAgent section. */
export type SettingsGetter = <T>(key: string) => T | undefined;

export function userSafety(get: SettingsGetter, defaults: SafetySettings): SafetySettings {
  const thresholds = get<{ low?: number; medium?: number; high?: number }>('safety.riskThresholds') ?? {};
  return {
    ...defaults,
    maxRows: get<number>('query.maxRows') ?? defaults.maxRows,
    statementTimeoutMs: get<number>('query.statementTimeoutMs') ?? defaults.statementTimeoutMs,
    lockTimeoutMs: get<number>('query.lockTimeoutMs') ?? defaults.lockTimeoutMs,
    previewTimeoutMs: get<number>('impact.previewTimeoutMs') ?? defaults.previewTimeoutMs,
    policy: {
      thresholds: { ...defaults.policy.thresholds, ...thresholds },
      criticalTables: get<string[]>('safety.criticalTables') ?? defaults.policy.criticalTables,
      autoApproveMaxRisk: get<Risk | 'none'>('approval.autoApproveMaxRisk') ?? defaults.policy.autoApproveMaxRisk,
    },
  };
}

export function userPlanning(get: SettingsGetter, defaults: PlanningSettings): PlanningSettings {
  return {
    interactive: get<boolean>('planning.interactive') ?? defaults.interactive,
    maxReviewCycles: get<number>('planning.maxReviewCycles') ?? defaults.maxReviewCycles,
  };
}

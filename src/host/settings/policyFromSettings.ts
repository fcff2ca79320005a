/**
 * A person's own defaults from VS Code settings (postgresAgent.*), without importing vscode, so a test can
 * check that the extension and the CLI compute the same policy for one workspace (core/settings/workspacePolicy.ts).
 */
import type { PlanningSettings } from '../../core/jobs/planningSettings';
import type { Risk } from '../../shared/impactReport';
import type { SafetySettings } from '../../core/sql/safetySettings';
import type { WorkspaceConfig } from '../../core/config/workspace';

/** `WorkspaceConfiguration.get` of the postgresAgent section. */
export type SettingsGetter = <T>(key: string) => T | undefined;

export function userSafety(get: SettingsGetter, defaults: SafetySettings): SafetySettings {
  const thresholds = get<{ low?: number; medium?: number; high?: number }>('safety.riskThresholds') ?? {};
  return {
    ...defaults,
    maxRows: get<number>('query.maxRows') ?? defaults.maxRows,
    statementTimeoutMs: get<number>('query.statementTimeoutMs') ?? defaults.statementTimeoutMs,
    lockTimeoutMs: get<number>('query.lockTimeoutMs') ?? defaults.lockTimeoutMs,
    ddlLockTimeoutMs: get<number>('query.ddlLockTimeoutMs') ?? defaults.ddlLockTimeoutMs,
    ddlLockAttempts: get<number>('query.ddlLockAttempts') ?? defaults.ddlLockAttempts,
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

/**
 * A workspace's own postgresAgent.* settings (.vscode/settings.json) in the shape of .pgagent/config.json,
 * so they are resolved the same way: they may tighten the person's settings, never loosen them.
 */
export function workspaceSettingsConfig(get: SettingsGetter): WorkspaceConfig {
  const autoApproveMaxRisk = get<'none' | 'LOW' | 'MEDIUM' | 'HIGH'>('approval.autoApproveMaxRisk');
  const criticalTables = get<string[]>('safety.criticalTables');
  const riskThresholds = get<{ low?: number; medium?: number; high?: number }>('safety.riskThresholds');
  const interactive = get<boolean>('planning.interactive');
  const maxReviewCycles = get<number>('planning.maxReviewCycles');
  const ddlLockTimeoutMs = get<number>('query.ddlLockTimeoutMs');
  const ddlLockAttempts = get<number>('query.ddlLockAttempts');
  const ddlLocks = {
    ...(ddlLockTimeoutMs !== undefined ? { ddlLockTimeoutMs } : {}),
    ...(ddlLockAttempts !== undefined ? { ddlLockAttempts } : {}),
  };
  return {
    connections: [],
    ...(autoApproveMaxRisk !== undefined ? { approval: { autoApproveMaxRisk } } : {}),
    ...(criticalTables !== undefined || riskThresholds !== undefined || Object.keys(ddlLocks).length > 0
      ? {
          safety: {
            ...(criticalTables !== undefined ? { criticalTables } : {}),
            ...(riskThresholds !== undefined ? { riskThresholds } : {}),
            ...ddlLocks,
          },
        }
      : {}),
    ...(interactive !== undefined || maxReviewCycles !== undefined
      ? {
          planning: {
            ...(interactive !== undefined ? { interactive } : {}),
            ...(maxReviewCycles !== undefined ? { maxReviewCycles } : {}),
          },
        }
      : {}),
  };
}

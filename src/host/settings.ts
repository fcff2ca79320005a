/** The safety settings a user configured (contributes.configuration), over the core defaults. */
import * as vscode from 'vscode';
import type { SafetySettings } from '../core/sql/safetySettings';
import type { Risk } from '../core/sql/impactReport';
import { coreServices } from './lazyServices';

export function safetySettings(defaults: SafetySettings): SafetySettings {
  const c = vscode.workspace.getConfiguration('postgresAgent');
  const thresholds = c.get<{ low?: number; medium?: number; high?: number }>('safety.riskThresholds') ?? {};
  return {
    ...defaults,
    maxRows: c.get<number>('query.maxRows') ?? defaults.maxRows,
    statementTimeoutMs: c.get<number>('query.statementTimeoutMs') ?? defaults.statementTimeoutMs,
    lockTimeoutMs: c.get<number>('query.lockTimeoutMs') ?? defaults.lockTimeoutMs,
    previewTimeoutMs: c.get<number>('impact.previewTimeoutMs') ?? defaults.previewTimeoutMs,
    policy: {
      thresholds: { ...defaults.policy.thresholds, ...thresholds },
      criticalTables: c.get<string[]>('safety.criticalTables') ?? [],
      autoApproveMaxRisk: c.get<Risk | 'none'>('approval.autoApproveMaxRisk') ?? 'none',
    },
  };
}

/**
 * The settings plus the team's approval rules (approval.approvers / approval.policy of .pgagent/config.json,
 * shared with the CLI), which the executor checks: VS Code runs nothing the CLI would refuse.
 */
export async function teamSafetySettings(defaults: SafetySettings, workspaceDir: string | undefined): Promise<SafetySettings> {
  const base = safetySettings(defaults);
  if (workspaceDir === undefined) return base;
  const services = coreServices();
  const rules = services.approvalRulesOf(await services.readWorkspaceConfig(services.workspacePaths(workspaceDir)));
  return rules ? { ...base, approvalRules: rules } : base;
}

export function redisUrl(): string | undefined {
  return vscode.workspace.getConfiguration('postgresAgent').get<string>('redisUrl')?.trim() || undefined;
}

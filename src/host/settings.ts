/**
 * The settings the extension works with: the workspace's policy (.pgagent/config.json, shared with the
 * CLI and teammates) over the person's own VS Code settings (postgresAgent.*) over the core defaults.
 */
import * as vscode from 'vscode';
import type { PlanningSettings } from '../core/jobs/jobRunner';
import type { SafetySettings } from '../core/sql/safetySettings';
import { coreServices } from './lazyServices';
import { userPlanning, userSafety } from './policyFromSettings';

const settings = () => {
  const c = vscode.workspace.getConfiguration('postgresAgent');
  return <T>(key: string) => c.get<T>(key);
};

/** Safety settings for an action in the workspace at `rootDir`: its config.json policy over the user's settings. */
export async function safetySettings(rootDir: string): Promise<SafetySettings> {
  const services = coreServices();
  const config = await services.readWorkspaceConfig(services.workspacePaths(rootDir));
  return services.resolveSafety(config, userSafety(settings(), services.DEFAULT_SAFETY));
}

export async function planningSettings(rootDir: string): Promise<PlanningSettings> {
  const services = coreServices();
  const config = await services.readWorkspaceConfig(services.workspacePaths(rootDir));
  return services.resolvePlanning(config, userPlanning(settings(), services.DEFAULT_PLANNING));
}

export function redisUrl(): string | undefined {
  return vscode.workspace.getConfiguration('postgresAgent').get<string>('redisUrl')?.trim() || undefined;
}

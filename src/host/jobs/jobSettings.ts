/**
 * The settings a job step runs with in VS Code, from ONE read of .pgagent/config.json and one of the person's
 * own config file: safety and planning (host/settings/settings.ts: the person's floor, the workspace only
 * tightens), team mode's checkpoint database, the model's time limit and where leases live.
 */
import * as vscode from 'vscode';
import type { CoreLoader } from '../lazyServices';
import { planningSettings, redisUrl, safetySettings } from '../settings/settings';
import type { JobRunnerSettings } from './jobRunners';

export async function jobRunnerSettings(core: CoreLoader, rootDir: string): Promise<JobRunnerSettings> {
  const services = core();
  const [workspace, own] = await Promise.all([
    services.readWorkspaceConfig(services.workspacePaths(rootDir)),
    services.readOwnConfig(process.env),
  ]);
  const read = { workspace, own };
  const config = vscode.workspace.getConfiguration('postgresAgent');
  return {
    safety: await safetySettings(core, rootDir, read),
    planning: await planningSettings(core, rootDir, read),
    teamDatabaseUrl: workspace.team?.databaseUrl?.trim() || config.get<string>('team.databaseUrl')?.trim() || '',
    modelTimeoutMs: config.get<number>('model.timeoutMs') ?? 60_000,
    redisUrl: redisUrl(),
  };
}

/**
 * The settings a job step runs with in VS Code, from ONE read of .pgagent/config.json and one of the person's
 * own config file (host/settings/settings.ts: the person's floor, the workspace only tightens; the read carried
 * to the claims of the step): safety and planning, team mode's checkpoint database, the model's time limit and
 * where leases live.
 */
import * as vscode from 'vscode';
import type { SettingsPort } from '../settings/settings';
import { redisUrl, settingsInForce } from '../settings/settings';
import type { JobRunnerSettings } from './jobRunners';

export async function jobRunnerSettings(port: SettingsPort, rootDir: string): Promise<JobRunnerSettings> {
  const { safety, planning, workspace } = await settingsInForce(port, rootDir);
  const config = vscode.workspace.getConfiguration('postgresAgent');
  return {
    safety,
    planning,
    teamDatabaseUrl: workspace?.team?.databaseUrl?.trim() || config.get<string>('team.databaseUrl')?.trim() || '',
    modelTimeoutMs: config.get<number>('model.timeoutMs') ?? 60_000,
    redisUrl: redisUrl(),
  };
}

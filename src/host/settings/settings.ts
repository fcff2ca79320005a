/**
 * The settings the extension works with (SPEC §5 3a): the person's own VS Code *user* settings
 * (postgresAgent.*) and own config file are the floor; the workspace — its .pgagent/config.json and its
 * workspace/folder settings — may only tighten them, and in a workspace VS Code does not trust it is not
 * read at all. Every loosening a workspace asks for is ignored with a warning (once per window, and in
 * the output channel).
 */
import * as vscode from 'vscode';
import type { WorkspaceConfig } from '../../core/config/workspace';
import type { PlanningSettings } from '../../core/jobs/planningSettings';
import type { Logger } from '../../core/platform/logger';
import type { SafetySettings } from '../../core/sql/safetySettings';
import type { PolicyWarning } from '../../core/settings/workspacePolicy';
import type { CoreLoader } from '../lazyServices';
import type { SettingsGetter } from './policyFromSettings';
import { userPlanning, userSafety, workspaceSettingsConfig } from './policyFromSettings';
import { untrustedRefusal } from './workspaceTrust';

const OWN = 'your VS Code user settings (postgresAgent.*) or ~/.config/pg-agent/config.json';
const WORKSPACE_SETTINGS = 'the workspace settings (.vscode/settings.json)';

/** Settings that loosen or tighten the approval rules: only the person's own value is theirs. */
const POLICY_KEYS = new Set([
  'approval.autoApproveMaxRisk',
  'safety.criticalTables',
  'safety.riskThresholds',
  'planning.interactive',
  'planning.maxReviewCycles',
]);

/**
 * The person's own values of the policy settings (a workspace's or folder's settings.json is the workspace's,
 * never the person's); limits such as query.maxRows loosen no rule and keep VS Code's usual precedence.
 */
function ownSettings(): SettingsGetter {
  const c = vscode.workspace.getConfiguration('postgresAgent');
  return <T>(key: string) => (POLICY_KEYS.has(key) ? c.inspect<T>(key)?.globalValue : c.get<T>(key));
}

/** What this workspace's settings.json says (folder over workspace), to be applied as a tightening only. */
function workspaceSettings(): SettingsGetter {
  const c = vscode.workspace.getConfiguration('postgresAgent');
  return <T>(key: string) => {
    const i = c.inspect<T>(key);
    return i?.workspaceFolderValue ?? i?.workspaceValue;
  };
}

/** The two config files as read once for a step (a job's step reads them once for safety, planning and team mode). */
export interface ConfigFiles {
  workspace: WorkspaceConfig;
  own: WorkspaceConfig;
}

/**
 * Safety settings for an action in the workspace at `rootDir`: the stricter of the person's own and the workspace's.
 * `read`: the config files when the caller already read them (a job's step reads them once).
 */
export async function safetySettings(core: CoreLoader, rootDir: string, read?: ConfigFiles): Promise<SafetySettings> {
  const services = core();
  const blocked = () => untrustedRefusal(core);
  const ownFile = services.ownConfigFile(process.env);
  const own = services.applyOwnSafety(
    read?.own ?? (await services.readOwnConfig(process.env)),
    userSafety(ownSettings(), services.DEFAULT_SAFETY),
  );
  if (!vscode.workspace.isTrusted) return { ...own, policySources: { ownConfigFile: ownFile, blocked } };
  const paths = services.workspacePaths(rootDir);
  const fromFile = services.resolveSafety(read?.workspace ?? (await services.readWorkspaceConfig(paths)), own, {
    workspace: paths.config,
    own: OWN,
  });
  const fromSettings = services.resolveSafety(workspaceSettingsConfig(workspaceSettings()), fromFile.settings, {
    workspace: WORKSPACE_SETTINGS,
    own: OWN,
  });
  warnOnce([...fromFile.warnings, ...fromSettings.warnings]);
  return {
    ...fromSettings.settings,
    policySources: { ownConfigFile: ownFile, workspaceDir: rootDir, blocked },
    history: services.historyFor(paths.history, 'vscode'),
  };
}

/** Planning settings, resolved like the safety settings. */
export async function planningSettings(
  core: CoreLoader,
  rootDir: string,
  read?: ConfigFiles,
): Promise<PlanningSettings> {
  const services = core();
  const own = services.applyOwnPlanning(
    read?.own ?? (await services.readOwnConfig(process.env)),
    userPlanning(ownSettings(), services.DEFAULT_PLANNING),
  );
  if (!vscode.workspace.isTrusted) return own;
  const paths = services.workspacePaths(rootDir);
  const fromFile = services.resolvePlanning(read?.workspace ?? (await services.readWorkspaceConfig(paths)), own, {
    workspace: paths.config,
    own: OWN,
  });
  const fromSettings = services.resolvePlanning(workspaceSettingsConfig(workspaceSettings()), fromFile.settings, {
    workspace: WORKSPACE_SETTINGS,
    own: OWN,
  });
  warnOnce([...fromFile.warnings, ...fromSettings.warnings]);
  return fromSettings.settings;
}

/**
 * Where tickets and approvals live: the person's own setting only. A cloned repository's settings.json pointing
 * the window at another Redis would let whoever runs that Redis approve this window's writes.
 */
export function redisUrl(): string | undefined {
  const own = vscode.workspace.getConfiguration('postgresAgent').inspect<string>('redisUrl')?.globalValue;
  return own?.trim() || undefined;
}

let warningLog: Logger | undefined;
const warned = new Set<string>();

/** Where policy warnings are logged besides the notification (the output channel); set at activation. */
export function logPolicyWarningsTo(logger: Logger): void {
  warningLog = logger;
}

/** Each ignored loosening once per window: a warning notification and a line in the output channel. */
function warnOnce(warnings: readonly PolicyWarning[]): void {
  for (const w of warnings) {
    if (warned.has(w.message)) continue;
    warned.add(w.message);
    warningLog?.warn(w.message, { file: w.file, setting: w.setting });
    void vscode.window.showWarningMessage(`Postgres Agent: ${w.message}`);
  }
}

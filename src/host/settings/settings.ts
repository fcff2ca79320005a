/**
 * The settings the extension works with (SPEC §5 3a): the person's own VS Code *user* settings
 * (postgresAgent.*) and own config file are the floor; the workspace — its .pgagent/config.json and its
 * workspace/folder settings — may only tighten them, and in a workspace VS Code does not trust it is not
 * read at all. Every loosening a workspace asks for is ignored with a warning (once per window, and in
 * the output channel).
 */
import * as vscode from 'vscode';
import type { AgentError } from '../../core/platform/errors';
import type { Logger } from '../../core/platform/logger';
import type { PlanningSettings } from '../../core/jobs/planningSettings';
import type { QueryHistory } from '../../core/sql/history/queryHistory';
import type { SafetySettings } from '../../core/sql/safetySettings';
import type { SettingsInForce, SettingsRequest } from '../../core/settings/settingsInForce';
import type { PolicyWarning } from '../../core/settings/workspacePolicy';
import type { ErrorCode } from '../../shared/errorCodes';
import type { SettingsGetter } from './policyFromSettings';
import { userPlanning, userSafety, workspaceSettingsConfig } from './policyFromSettings';
import { untrustedRefusal } from './workspaceTrust';

const OWN = 'your VS Code user settings (postgresAgent.*) or ~/.config/pg-agent/config.json';
const WORKSPACE_SETTINGS = 'the workspace settings (.vscode/settings.json)';

/** What the window's settings need from the core (built in host/compose/settingsPort.ts). */
export interface SettingsPort {
  /** The defaults a new user gets, under their VS Code user settings. */
  defaults(): { safety: SafetySettings; planning: PlanningSettings };
  /** The person's own config file ($XDG_CONFIG_HOME/pg-agent/config.json). */
  ownConfigFile(): string;
  /** core/settings/settingsInForce.ts: the action's ONE read of the config files, and the one resolver. */
  readSettingsInForce(request: SettingsRequest): Promise<SettingsInForce>;
  /** Where this workspace's reads and executed writes are recorded, as VS Code's. */
  history(rootDir: string): QueryHistory;
  /** An error of the core's kind (the untrusted workspace's refusal). */
  error(code: ErrorCode, message: string, advice: string): AgentError;
}

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

/**
 * The settings in force for one action in the workspace at `rootDir`, from ONE read of each config file: the
 * person's own (VS Code user settings, own config file) tightened by the workspace's .pgagent/config.json and
 * settings.json — none of the workspace's when VS Code does not trust it. The safety settings carry that read to
 * the claim (`policySources.read`), so an action that reads its settings here and passes them on reads them once.
 */
export async function settingsInForce(port: SettingsPort, rootDir: string): Promise<SettingsInForce> {
  const trusted = vscode.workspace.isTrusted;
  const defaults = port.defaults();
  const own = ownSettings();
  const resolved = await port.readSettingsInForce({
    base: { safety: userSafety(own, defaults.safety), planning: userPlanning(own, defaults.planning) },
    ownConfigFile: port.ownConfigFile(),
    ownName: OWN,
    workspaceDir: trusted ? rootDir : undefined,
    moreLayers: trusted
      ? [{ config: workspaceSettingsConfig(workspaceSettings()), files: { workspace: WORKSPACE_SETTINGS, own: OWN } }]
      : [],
    policySources: { blocked: () => untrustedRefusal((...args) => port.error(...args)) },
  });
  warnOnce(resolved.warnings);
  return trusted ? { ...resolved, safety: { ...resolved.safety, history: port.history(rootDir) } } : resolved;
}

/** The safety settings of an action (see settingsInForce: one read of each config file). */
export async function safetySettings(port: SettingsPort, rootDir: string): Promise<SafetySettings> {
  return (await settingsInForce(port, rootDir)).safety;
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

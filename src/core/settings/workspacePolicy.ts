/**
 * The settings in force for a workspace (SPEC §5 3a): the person's own configuration
 * ($XDG_CONFIG_HOME/pg-agent/config.json for the CLI and MCP, VS Code user settings for the extension) is
 * the floor; the workspace's .pgagent/config.json may tighten it, never loosen it. A cloned repository can
 * ship that file, so every setting is resolved as the stricter of the two, and every loosening the
 * workspace asked for is ignored with a warning naming the file and the setting.
 */
import type { ApprovalPolicy, ApprovalRules, Approver } from '../approvals/approvalPolicy';
import { looserFields, strictestPolicy } from '../approvals/strictestPolicy';
import type { PlanningSettings } from '../jobs/planningSettings';
import { RISK_ORDER } from '../../shared/impactReport';
import type { RiskPolicy } from '../sql/risk';
import type { SafetySettings } from '../sql/safetySettings';
import { DEFAULT_RECOVERY } from '../sql/safetySettings';
import { DEFAULT_SWEEPING_RULES } from '../sql/sweepingWrites';
import type { WorkspaceConfig } from '../config/workspace';
import { approvalRulesOf } from '../config/workspace';

/** A loosening the workspace asked for and did not get. */
export interface PolicyWarning {
  /** The workspace file that asked for it. */
  file: string;
  /** "approval.autoApproveMaxRisk", "safety.riskThresholds.high", ... */
  setting: string;
  /** The whole sentence, as shown on stderr, in JSON `warnings` and in VS Code. */
  message: string;
}

export interface Resolved<T> {
  settings: T;
  warnings: PolicyWarning[];
}

/** Where the workspace's settings come from and where the person would loosen them (for the warnings). */
export interface PolicyFiles {
  /** The workspace's config (.pgagent/config.json, or "workspace settings" in VS Code). */
  workspace: string;
  /** Where the person's own value lives ("~/.config/pg-agent/config.json", "your VS Code user settings"). */
  own: string;
}

type Thresholds = RiskPolicy['thresholds'];
const THRESHOLD_KEYS = [
  'low',
  'medium',
  'high',
  'smallTableRows',
  'bigTableRows',
] as const satisfies readonly (keyof Thresholds)[];
const AUTO_ORDER: readonly RiskPolicy['autoApproveMaxRisk'][] = ['none', ...RISK_ORDER];

function definedThresholds<T extends object>(given: T | undefined): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(given ?? {}).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/** The person's own config file applied over their base settings: it may set anything, loosening included. */
export function applyOwnSafety(own: WorkspaceConfig, base: SafetySettings): SafetySettings {
  const rules = approvalRulesOf(own);
  return {
    ...base,
    ...(rules ? { approvalRules: rules } : {}),
    ddlLockTimeoutMs: own.safety?.ddlLockTimeoutMs ?? base.ddlLockTimeoutMs,
    ddlLockAttempts: own.safety?.ddlLockAttempts ?? base.ddlLockAttempts,
    ...(own.safety?.guardVolatileValues !== undefined ? { guardVolatileValues: own.safety.guardVolatileValues } : {}),
    // The way back from destructive DDL: only the person's own config changes it (a workspace's is not read).
    ...(own.safety?.recovery
      ? { recovery: { ...(base.recovery ?? DEFAULT_RECOVERY), ...definedThresholds(own.safety.recovery) } }
      : {}),
    policy: {
      thresholds: { ...base.policy.thresholds, ...definedThresholds(own.safety?.riskThresholds) },
      criticalTables: own.safety?.criticalTables ?? base.policy.criticalTables,
      autoApproveMaxRisk: own.approval?.autoApproveMaxRisk ?? base.policy.autoApproveMaxRisk,
      ...(own.safety?.sweepingWrites || base.policy.sweepingWrites
        ? {
            sweepingWrites: {
              ...(base.policy.sweepingWrites ?? DEFAULT_SWEEPING_RULES),
              ...definedThresholds(own.safety?.sweepingWrites),
            },
          }
        : {}),
    },
  };
}

export function applyOwnPlanning(own: WorkspaceConfig, base: PlanningSettings): PlanningSettings {
  return {
    interactive: own.planning?.interactive ?? base.interactive,
    maxReviewCycles: own.planning?.maxReviewCycles ?? base.maxReviewCycles,
  };
}

/** The stricter of the person's own settings and the workspace's, with a warning for each loosening ignored. */
export function resolveSafety(
  workspace: WorkspaceConfig,
  own: SafetySettings,
  files: PolicyFiles,
): Resolved<SafetySettings> {
  const warnings: PolicyWarning[] = [];
  const ignore = (setting: string, asked: unknown, kept: unknown) =>
    warnings.push({
      file: files.workspace,
      setting,
      message: `${files.workspace}: ${setting} ${JSON.stringify(asked)} is ignored: a workspace file may only tighten the rules, and this would loosen them (in force: ${JSON.stringify(kept)}). If you mean it, set it in ${files.own}.`,
    });

  let autoApproveMaxRisk = own.policy.autoApproveMaxRisk;
  const askedAuto = workspace.approval?.autoApproveMaxRisk;
  if (askedAuto !== undefined) {
    if (AUTO_ORDER.indexOf(askedAuto) <= AUTO_ORDER.indexOf(autoApproveMaxRisk)) autoApproveMaxRisk = askedAuto;
    else ignore('approval.autoApproveMaxRisk', askedAuto, autoApproveMaxRisk);
  }

  // A higher threshold lets more rows count as a lower risk (and more tables as small): lower is stricter.
  const thresholds = { ...own.policy.thresholds };
  for (const [key, asked] of Object.entries(definedThresholds(workspace.safety?.riskThresholds)) as [
    keyof Thresholds,
    number,
  ][]) {
    if (!THRESHOLD_KEYS.includes(key)) continue;
    if (asked <= thresholds[key]) thresholds[key] = asked;
    else ignore(`safety.riskThresholds.${key}`, asked, thresholds[key]);
  }

  // The workspace may add critical tables; the person's own stay critical whatever the file lists.
  const criticalTables = [...new Set([...own.policy.criticalTables, ...(workspace.safety?.criticalTables ?? [])])];

  // Approved DDL's lock tries: a shorter wait and fewer tries hold other sessions up less, so lower is stricter.
  const ddlLocks = { ddlLockTimeoutMs: own.ddlLockTimeoutMs, ddlLockAttempts: own.ddlLockAttempts };
  for (const key of ['ddlLockTimeoutMs', 'ddlLockAttempts'] as const) {
    const asked = workspace.safety?.[key];
    if (asked === undefined) continue;
    if (asked <= ddlLocks[key]) ddlLocks[key] = asked;
    else ignore(`safety.${key}`, asked, ddlLocks[key]);
  }

  // A smaller share and factor flag more writes: lower is stricter.
  const sweepingWrites = { ...(own.policy.sweepingWrites ?? DEFAULT_SWEEPING_RULES) };
  for (const [key, asked] of Object.entries(definedThresholds(workspace.safety?.sweepingWrites)) as [
    keyof typeof sweepingWrites,
    number,
  ][]) {
    if (!(key in sweepingWrites)) continue;
    if (asked <= sweepingWrites[key]) sweepingWrites[key] = asked;
    else ignore(`safety.sweepingWrites.${key}`, asked, sweepingWrites[key]);
  }

  // Fresh UUIDs and current timestamps may vary in a guard transaction's retry: a workspace may only turn it off.
  let guardVolatileValues = own.guardVolatileValues;
  const askedVolatile = workspace.safety?.guardVolatileValues;
  if (askedVolatile === false) guardVolatileValues = false;
  else if (askedVolatile === true && guardVolatileValues === false)
    ignore('safety.guardVolatileValues', askedVolatile, guardVolatileValues);

  const approvalRules = combinedRules(own.approvalRules, approvalRulesOf(workspace), (setting, asked, kept) =>
    ignore(setting, asked, kept),
  );
  return {
    settings: {
      ...own,
      ...ddlLocks,
      ...(guardVolatileValues !== undefined ? { guardVolatileValues } : {}),
      ...(approvalRules ? { approvalRules } : {}),
      policy: {
        thresholds,
        criticalTables,
        autoApproveMaxRisk,
        ...(own.policy.sweepingWrites || workspace.safety?.sweepingWrites ? { sweepingWrites } : {}),
      },
    },
    warnings,
  };
}

/** A workspace's layer of settings (its .pgagent/config.json, VS Code's workspace settings) and its files for warnings. */
export interface WorkspaceLayer {
  config: WorkspaceConfig;
  files: PolicyFiles;
}

/**
 * The one resolver of the safety settings in force, for every surface (an action's one read of its files and both
 * resolvers together: `settingsInForce.ts`): the person's `base` (defaults with the CLI's flags, or VS Code's user
 * settings) with their own config file applied (it may loosen), then each workspace layer in order as a tightening
 * only, with every loosening it asked for as a warning.
 */
export function safetyInForce(
  base: SafetySettings,
  own: WorkspaceConfig,
  layers: readonly WorkspaceLayer[],
): Resolved<SafetySettings> {
  return tightenedBy(layers, applyOwnSafety(own, base), resolveSafety);
}

/** The planning settings in force, resolved like `safetyInForce`: own config over the base, then each layer tightening. */
export function planningInForce(
  base: PlanningSettings,
  own: WorkspaceConfig,
  layers: readonly WorkspaceLayer[],
): Resolved<PlanningSettings> {
  return tightenedBy(layers, applyOwnPlanning(own, base), resolvePlanning);
}

function tightenedBy<T>(
  layers: readonly WorkspaceLayer[],
  own: T,
  resolve: (workspace: WorkspaceConfig, own: T, files: PolicyFiles) => Resolved<T>,
): Resolved<T> {
  let settings = own;
  const warnings: PolicyWarning[] = [];
  for (const layer of layers) {
    const resolved = resolve(layer.config, settings, layer.files);
    settings = resolved.settings;
    warnings.push(...resolved.warnings);
  }
  return { settings, warnings };
}

/**
 * The approval rules shown as one (approvers of both; each policy the stricter of the two). The executor
 * does not rely on this merge: policyInForce checks each source against its own approvers, so an approver
 * listed only by the workspace never satisfies the person's own requirement.
 */
function combinedRules(
  own: ApprovalRules | undefined,
  workspace: ApprovalRules | undefined,
  ignore: (setting: string, asked: unknown, kept: unknown) => void,
): ApprovalRules | undefined {
  if (!workspace) return own;
  if (!own) return workspace;
  for (const field of looserFields(workspace.policy, own.policy))
    ignore(`approval.policy.${field}`, workspace.policy[field], own.policy[field]);
  const approvers: Approver[] = [
    ...own.approvers,
    ...workspace.approvers.filter((a) => !own.approvers.some((o) => o.name === a.name)),
  ];
  const connections: Record<string, ApprovalPolicy> = { ...own.connections };
  for (const [key, policy] of Object.entries(workspace.connections ?? {})) {
    const mine = own.connections?.[key];
    connections[key] = mine ? strictestPolicy(mine, policy) : policy;
  }
  return {
    approvers,
    policy: strictestPolicy(own.policy, workspace.policy),
    ...(Object.keys(connections).length > 0 ? { connections } : {}),
  };
}

/**
 * Planning: skipping the plan review (`interactive: false`) is a loosening, so only the person's own
 * setting can do it. `maxReviewCycles` is a soft limit that only changes a hint, never what runs: the
 * workspace may set it either way.
 */
export function resolvePlanning(
  workspace: WorkspaceConfig,
  own: PlanningSettings,
  files: PolicyFiles,
): Resolved<PlanningSettings> {
  const warnings: PolicyWarning[] = [];
  let interactive = own.interactive;
  const asked = workspace.planning?.interactive;
  if (asked === true) interactive = true;
  else if (asked === false && own.interactive) {
    warnings.push({
      file: files.workspace,
      setting: 'planning.interactive',
      message: `${files.workspace}: planning.interactive false is ignored: a workspace file may not skip the plan review (in force: true). If you mean it, set it in ${files.own}.`,
    });
  }
  return {
    settings: { interactive, maxReviewCycles: workspace.planning?.maxReviewCycles ?? own.maxReviewCycles },
    warnings,
  };
}

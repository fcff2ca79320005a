/**
 * The settings in force for one action (a click in VS Code, a `pg-agent job` step): the config files read ONCE —
 * the person's own and, when the workspace is read, its .pgagent/config.json — resolved by the one resolver
 * (`safetyInForce`, `planningInForce`), and carried to the claim (`policySources.read`), so approving a write reads
 * its settings once however many parts of it need them (the run, who signed, the claim's policy).
 */
import type { ConfigFilesRead, PolicySources } from '../approvals/policyInForce';
import { readConfigFile, workspacePaths } from '../config/workspace';
import type { WorkspaceConfig } from '../config/workspace';
import type { PlanningSettings } from '../jobs/planningSettings';
import type { SafetySettings } from '../sql/safetySettings';
import type { PolicyWarning, WorkspaceLayer } from './workspacePolicy';
import { planningInForce, safetyInForce } from './workspacePolicy';

export interface SettingsRequest {
  /** The person's base: defaults with the CLI's flags, or VS Code's user settings. */
  base: { safety: SafetySettings; planning: PlanningSettings };
  /** The person's own config file ($XDG_CONFIG_HOME/pg-agent/config.json); it may loosen. */
  ownConfigFile: string;
  /** Where a warning sends the person to loosen a setting ("~/.config/pg-agent/config.json", "your VS Code user settings"). */
  ownName: string;
  /** The workspace whose .pgagent/config.json tightens; undefined: no workspace file is read (VS Code: not trusted). */
  workspaceDir: string | undefined;
  /** Layers after the workspace's file, tightening only (VS Code: the workspace's settings.json). */
  moreLayers?: readonly WorkspaceLayer[];
  /** Where the claim reads the rest of the policy in force (profile, password, logger, the trust refusal). */
  policySources?: Omit<PolicySources, 'ownConfigFile' | 'workspaceDir' | 'read'>;
}

export interface SettingsInForce {
  safety: SafetySettings;
  planning: PlanningSettings;
  /** Every loosening a workspace layer asked for and did not get. */
  warnings: PolicyWarning[];
  /** The workspace's config file as read (team mode's database lives there); undefined when it was not read. */
  workspace: WorkspaceConfig | undefined;
}

/** The one read of an action's config files. */
export async function readConfigFiles(
  ownConfigFile: string,
  workspaceDir: string | undefined,
): Promise<ConfigFilesRead> {
  const [own, workspace] = await Promise.all([
    readConfigFile(ownConfigFile),
    workspaceDir === undefined ? undefined : readConfigFile(workspacePaths(workspaceDir).config),
  ]);
  return { own, workspace };
}

/** Reads the config files once and resolves the safety and planning settings in force from that one read. */
export async function readSettingsInForce(request: SettingsRequest): Promise<SettingsInForce> {
  const read = await readConfigFiles(request.ownConfigFile, request.workspaceDir);
  const layers: WorkspaceLayer[] = [
    ...(read.workspace && request.workspaceDir !== undefined
      ? [
          {
            config: read.workspace,
            files: { workspace: workspacePaths(request.workspaceDir).config, own: request.ownName },
          },
        ]
      : []),
    ...(request.moreLayers ?? []),
  ];
  const safety = safetyInForce(request.base.safety, read.own, layers);
  const planning = planningInForce(request.base.planning, read.own, layers);
  return {
    safety: {
      ...safety.settings,
      policySources: {
        ...request.policySources,
        ownConfigFile: request.ownConfigFile,
        ...(request.workspaceDir !== undefined ? { workspaceDir: request.workspaceDir } : {}),
        read,
      },
    },
    planning: planning.settings,
    warnings: [...safety.warnings, ...planning.warnings],
    workspace: read.workspace,
  };
}

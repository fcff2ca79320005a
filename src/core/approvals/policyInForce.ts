/**
 * One policy per database, wherever it is reached from (SPEC §5 3a). At the moment an executor claims a
 * ticket it reads, afresh, every policy that governs the database it is connected to — the policy pinned in
 * the database, the person's own config, the workspace's — and the ticket must satisfy all of them. Which
 * entries govern is decided by the database's identity (system identifier + database), not by the URL
 * spelling, host alias, port, profile or --workspace the executor happened to use.
 *
 * Config shape (the person's own $XDG_CONFIG_HOME/pg-agent/config.json, or a workspace's .pgagent/config.json):
 *   "approval": {
 *     "approvers": [...], "policy": {...},              // every database
 *     "connections": { "<URL or profile>": {...} },      // the database that URL or profile reaches
 *     "databases": { "<system_identifier>/<db>": {...} } // that database, however it is reached
 *   }
 * A URL or profile key is resolved by connecting to it; one that cannot be resolved (unreachable, wrong
 * password, unknown profile) is taken to govern this database too: stricter is safe.
 */
import type { ConnectionProfile, ServerTarget } from '../db/connectionTarget';
import { parseConnectionUrl, profileTarget } from '../db/connectionTarget';
import type { DbSession } from '../db/db';
import type { DatabaseIdentity } from '../db/databaseIdentity';
import { databaseIdentity } from '../db/databaseIdentity';
import { openPostgres } from '../db/postgresDb';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';
import type { WorkspaceConfig } from '../config/workspace';
import { approvalRulesOf, readConfigFile, workspacePaths } from '../config/workspace';
import type { ApprovalPolicy, ApprovalRules, Approver } from './approvalPolicy';
import { missingApprovals, policyFor } from './approvalPolicy';
import type { Ticket } from './ticket';
import { readPinnedPolicy } from './pinnedPolicy';

/** Where the policy in force is read from, at every execution. */
export interface PolicySources {
  /** The person's own config ($XDG_CONFIG_HOME/pg-agent/config.json); may loosen, may name databases by identity. */
  ownConfigFile?: string;
  /** The workspace folder whose .pgagent/config.json tightens; absent for a workspace VS Code does not trust. */
  workspaceDir?: string;
  /** The profile name the executing connection came from (`--connection`, VS Code's connection). */
  profile?: string;
  /** Password for connecting to other URL or profile keys to learn their identity (PGPASSWORD). */
  password?: string;
  logger?: Logger;
  /**
   * Asked at every claim: a reason nothing may execute here now (VS Code: a workspace it does not trust),
   * or undefined. Evaluated at that moment, so every executor that claims a ticket honours it.
   */
  blocked?: () => AgentError | undefined;
  /**
   * The two config files as this action already read them for its settings (core/settings/settingsInForce.ts):
   * the claim uses them instead of reading the files again, so one action reads its settings once. Set only where
   * settings are read per action (a VS Code click, one CLI job step), never by a long-lived server.
   */
  read?: ConfigFilesRead;
}

/** The person's own config file and the workspace's (undefined when the workspace is not read), as read once. */
export interface ConfigFilesRead {
  own: WorkspaceConfig;
  workspace: WorkspaceConfig | undefined;
}

/** The config files of `sources`: as the action read them, else read now. */
async function configFilesOf(sources: PolicySources): Promise<Partial<ConfigFilesRead>> {
  const workspaceFile = sources.workspaceDir ? workspacePaths(sources.workspaceDir).config : undefined;
  if (sources.read)
    return {
      ...(sources.ownConfigFile ? { own: sources.read.own } : {}),
      ...(workspaceFile ? { workspace: sources.read.workspace } : {}),
    };
  const [own, workspace] = await Promise.all([
    sources.ownConfigFile ? readConfigFile(sources.ownConfigFile) : undefined,
    workspaceFile ? readConfigFile(workspaceFile) : undefined,
  ]);
  return { ...(own ? { own } : {}), ...(workspace ? { workspace } : {}) };
}

/** One source's requirement, checked against that source's own approvers only. */
export interface PolicyLayer {
  /** "the policy pinned in the database", "/home/me/.config/pg-agent/config.json approval.databases[…]". */
  source: string;
  approvers: Approver[];
  policy: ApprovalPolicy;
}

export interface PolicyInForce {
  /** Undefined when the database would not say (then every identity-keyed entry applies). */
  identity: DatabaseIdentity | undefined;
  layers: PolicyLayer[];
}

/** Resolves a connection key (URL or profile name) to the identity of the database it reaches; undefined if it cannot. */
export type IdentityResolver = (target: ServerTarget) => Promise<DatabaseIdentity | undefined>;

/**
 * Every policy governing the database `session` is connected to, read now. Throws CONFIG_INVALID for a
 * malformed config file and APPROVAL_POLICY for a pinned policy that does not verify (the executor refuses).
 */
export async function policyInForce(
  session: DbSession,
  connection: string,
  sources: PolicySources,
  resolveIdentity: IdentityResolver = connectForIdentity(sources),
): Promise<PolicyInForce> {
  const logger = sources.logger ?? silentLogger;
  const identity = await databaseIdentity(session).catch((error: unknown) => {
    logger.warn('could not read the database identity: every identity-keyed policy applies', { error: String(error) });
    return undefined;
  });
  const layers: PolicyLayer[] = [];
  if (identity) {
    const pinned = await readPinnedPolicy(session, identity);
    if (pinned) layers.push(...layersOf(pinned.rules, 'the policy pinned in the database', []));
  }
  const { own, workspace } = await configFilesOf(sources);
  const workspaceFile = sources.workspaceDir ? workspacePaths(sources.workspaceDir).config : undefined;
  const profiles = [...(own?.connections ?? []), ...(workspace?.connections ?? [])];
  const here: Here = {
    connection,
    ...(sources.profile !== undefined ? { profile: sources.profile } : {}),
    identity,
    profiles,
    resolveIdentity,
  };
  if (own && sources.ownConfigFile) layers.push(...(await configLayers(sources.ownConfigFile, own, here)));
  if (workspace && workspaceFile) layers.push(...(await configLayers(workspaceFile, workspace, here)));
  return { identity, layers };
}

/** Whether anything beyond "a person approved" is required (signatures, two persons, roles): then nothing is auto-approved. */
export function requiresPeople(policy: PolicyInForce): boolean {
  return policy.layers.some((l) => Object.keys(l.policy).length > 0);
}

/** The claim-time check: every layer's requirement met, each against its own approvers; refusals name their source. */
export function authorizeInForce(policy: PolicyInForce): (ticket: Ticket) => AgentError | undefined {
  return (ticket) => {
    const missing: string[] = [];
    const layers = policy.layers.length > 0 ? policy.layers : [{ source: '', approvers: [], policy: {} }];
    for (const layer of layers) {
      for (const need of missingApprovals(ticket, { approvers: layer.approvers, policy: layer.policy })) {
        const line = layer.source ? `${need} (required by ${layer.source})` : need;
        if (!missing.includes(line)) missing.push(line);
      }
    }
    if (missing.length === 0) return undefined;
    return new AgentError(
      'APPROVAL_POLICY',
      `Ticket ${ticket.id} may not run yet: it needs ${missing.join('; and ')}.`,
      `The ticket is still approved and unspent: add what is missing (\`pg-agent approvals approve ${ticket.id}\` by the right person, with their key), then run it again.`,
    );
  };
}

/** What the executors take: the sources to read (policySources), or, without them, rules given in advance (tests). */
export interface ClaimPolicyOptions {
  connection: string;
  policySources?: PolicySources;
  approvalRules?: ApprovalRules;
}

/** The authorize callback of a ticket claim, with the policy read at this moment. */
export async function authorizeAtClaim(
  session: DbSession,
  options: ClaimPolicyOptions,
): Promise<(ticket: Ticket) => AgentError | undefined> {
  const blocked = options.policySources?.blocked?.();
  if (blocked) return () => blocked;
  const policy = await policyInForce(session, options.connection, options.policySources ?? {});
  const given = options.approvalRules;
  if (!options.policySources && given)
    policy.layers.push({
      source: 'the approval rules given',
      approvers: given.approvers,
      policy: policyFor(given, options.connection),
    });
  return authorizeInForce(policy);
}

interface Here {
  connection: string;
  profile?: string;
  identity: DatabaseIdentity | undefined;
  profiles: readonly ConnectionProfile[];
  resolveIdentity: IdentityResolver;
}

async function configLayers(file: string, config: WorkspaceConfig, here: Here): Promise<PolicyLayer[]> {
  const rules = approvalRulesOf(config);
  const byIdentity = config.approval?.databases ?? {};
  const matched: [string, ApprovalPolicy][] = [];
  for (const [key, policy] of Object.entries(rules?.connections ?? {})) {
    if (await governs(key, here)) matched.push([`${file} approval.connections["${key}"]`, policy]);
  }
  for (const [key, policy] of Object.entries(byIdentity)) {
    if (!here.identity || key === here.identity.key)
      matched.push([`${file} approval.databases["${key}"]`, JSON.parse(JSON.stringify(policy)) as ApprovalPolicy]);
  }
  if (!rules && matched.length === 0) return [];
  return layersOf(rules ?? { approvers: [], policy: {} }, `${file} approval.policy`, matched);
}

/**
 * A source's layers: its general policy, or, for each entry that governs this database, that entry over
 * the general policy (an entry replaces the keys it sets, as approval.connections always did).
 */
function layersOf(rules: ApprovalRules, general: string, matched: readonly [string, ApprovalPolicy][]): PolicyLayer[] {
  if (matched.length === 0) return [{ source: general, approvers: rules.approvers, policy: rules.policy }];
  return matched.map(([source, entry]) => ({
    source,
    approvers: rules.approvers,
    policy: { ...rules.policy, ...entry },
  }));
}

/** Whether a connection key (URL or profile name) reaches this database; fails closed. */
async function governs(key: string, here: Here): Promise<boolean> {
  if (key === here.connection || key === here.profile) return true;
  if (!here.identity) return true;
  let target: ServerTarget;
  if (/^postgres(ql)?:\/\//.test(key)) {
    try {
      target = parseConnectionUrl(key);
    } catch {
      return true;
    }
  } else {
    const profile = here.profiles.find((p) => p.name === key);
    if (!profile) return true;
    target = profileTarget(profile);
  }
  const identity = await here.resolveIdentity(target);
  return identity === undefined || identity.key === here.identity.key;
}

/** Connects to a key's database just long enough to read its identity; undefined when it cannot. */
export function connectForIdentity(sources: Pick<PolicySources, 'password' | 'logger'>): IdentityResolver {
  return async (target) => {
    const password = target.password ?? sources.password;
    try {
      const db = await openPostgres(
        { ...target, ...(password !== undefined ? { password } : {}) },
        { logger: silentLogger, connectTimeoutMs: 3000, maxConnections: 1 },
      );
      try {
        return await databaseIdentity(db);
      } finally {
        await db.close();
      }
    } catch (error) {
      (sources.logger ?? silentLogger).warn(
        'a connection key of the approval policy could not be resolved: it applies here (fail closed)',
        { host: target.host, port: target.port, database: target.database, error: String(error) },
      );
      return undefined;
    }
  };
}

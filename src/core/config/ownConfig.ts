/**
 * The person's own configuration (SPEC §5 3a): `$XDG_CONFIG_HOME/pg-agent/config.json` (default
 * ~/.config). Outside every workspace, so a cloned repository cannot ship it: it is the only file whose
 * settings may loosen the rules (auto-approval, thresholds, fewer approvers); a workspace file only tightens.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Env } from '../db/connectionTarget';
import type { WorkspaceConfig } from './workspace';
import { readConfigFile } from './workspace';

/** $XDG_CONFIG_HOME/pg-agent (default ~/.config/pg-agent): the person's own folder, keys included. */
export function ownConfigDir(env: Env): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), '.config');
  return join(base, 'pg-agent');
}

export function ownConfigFile(env: Env): string {
  return join(ownConfigDir(env), 'config.json');
}

/** The person's own config; a missing file is an empty config, a malformed one a clear error (CONFIG_INVALID). */
export function readOwnConfig(env: Env): Promise<WorkspaceConfig> {
  return readConfigFile(ownConfigFile(env));
}

/** pg-agent's own known_hosts for SSH tunnels: host keys a person accepted, shared by the CLI and VS Code. */
export function ownKnownHostsFile(env: Env): string {
  return join(ownConfigDir(env), 'known_hosts');
}

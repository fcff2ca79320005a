/**
 * How VS Code starts `pg-agent mcp` for the active connection: a pure function (no `vscode` import) so a
 * test can start the server exactly as the definition describes it. The password of a server profile
 * travels as PGPASSWORD in the child's environment, never on its command line or in a file.
 */
import { join } from 'node:path';
import type { ConnectionProfile } from '../../core/db/connectionTarget';

export interface McpLaunchInput {
  /** The extension's folder (dist/cli.js lives there). */
  extensionPath: string;
  /** The Node.js to run it with: the editor's own (process.execPath). */
  nodePath: string;
  /** Whether nodePath is an Electron binary that must be told to behave as Node.js. */
  electron: boolean;
  /** The workspace folder holding .pgagent/, or the extension's storage when no folder is open. */
  workspaceDir: string;
  connection: { kind: 'sample' } | { kind: 'profile'; profile: ConnectionProfile; password?: string };
  /** The window's Redis (postgresAgent.redisUrl): tickets must live in the same store on both sides. */
  redisUrl?: string;
  /** postgresAgent.query.maxRows and statementTimeoutMs, so the agent's reads get the window's limits. */
  maxRows?: number;
  timeoutMs?: number;
  version: string;
}

export interface McpLaunch {
  label: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  version: string;
}

export function buildMcpLaunch(input: McpLaunchInput): McpLaunch {
  const { connection } = input;
  // A tunnel or an IAM login cannot be said in a URL (and the URL's host:port would be another database,
  // seen from here): the server resolves such a profile by name from the workspace's .pgagent/config.json.
  const byName =
    connection.kind === 'profile' && (connection.profile.ssh !== undefined || connection.profile.iam !== undefined);
  const db =
    connection.kind === 'sample' ? 'sample' : byName ? connection.profile.name : profileUrl(connection.profile);
  const label =
    connection.kind === 'sample' ? 'Postgres Agent (sample)' : `Postgres Agent (${connection.profile.name})`;
  return {
    label,
    command: input.nodePath,
    args: [
      join(input.extensionPath, 'dist', 'cli.js'),
      'mcp',
      byName ? '--connection' : '--db',
      db,
      '--workspace',
      input.workspaceDir,
      ...(input.maxRows !== undefined ? ['--max-rows', String(input.maxRows)] : []),
      ...(input.timeoutMs !== undefined ? ['--timeout-ms', String(input.timeoutMs)] : []),
    ],
    cwd: input.workspaceDir,
    env: childEnv(input.electron, connection.kind === 'profile' ? connection.password : undefined, input.redisUrl),
    // A new version makes VS Code restart the server and list its tools again.
    version: `${input.version}+${db}+${input.workspaceDir}`,
  };
}

/**
 * The environment of a `pg-agent` child the editor starts (mcp, guard): Electron told to behave as Node.js,
 * the profile's password as PGPASSWORD (never on a command line), the window's Redis.
 */
export function childEnv(
  electron: boolean,
  password: string | undefined,
  redisUrl: string | undefined,
): Record<string, string> {
  return {
    ...(electron ? { ELECTRON_RUN_AS_NODE: '1' } : {}),
    ...(password ? { PGPASSWORD: password } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  };
}

/** A password-free URL for the profile; the server reads the password from PGPASSWORD. */
export function profileUrl(profile: ConnectionProfile): string {
  const url = new URL('postgres://localhost');
  url.hostname = profile.host;
  url.port = String(profile.port ?? 5432);
  url.username = profile.user;
  url.pathname = `/${encodeURIComponent(profile.database)}`;
  if (profile.sslmode) url.searchParams.set('sslmode', profile.sslmode);
  for (const key of ['sslrootcert', 'sslcert', 'sslkey'] as const) {
    const file = profile[key];
    if (file) url.searchParams.set(key, file);
  }
  return url.toString();
}

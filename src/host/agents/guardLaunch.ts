/**
 * How VS Code starts `pg-agent guard` for the active connection ("Start Guarded Endpoint"): a pure function
 * (no `vscode` import) so a test can run the guard exactly as the command does. Like `pg-agent mcp`
 * (mcpLaunch.ts), the profile's password travels as PGPASSWORD in the child's environment only; the guard
 * user the command makes gets a fresh random password, shown once in the URL it copies.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ConnectionProfile } from '../../core/db/connectionTarget';
import { childEnv, profileUrl } from './mcpLaunch';

export interface GuardLaunchInput {
  extensionPath: string;
  nodePath: string;
  electron: boolean;
  /** The workspace folder holding .pgagent/: the guard's tickets land where this window's "Waiting for you" reads them. */
  workspaceDir: string;
  profile: ConnectionProfile;
  password?: string;
  redisUrl?: string;
}

export interface GuardLaunch {
  command: string;
  /** `pg-agent guard users add NAME --json`: prints {"user","url"}. */
  addUserArgs: string[];
  /** `pg-agent guard --listen 127.0.0.1:0`: a free loopback port, printed on stderr. */
  serveArgs: string[];
  cwd: string;
  env: Record<string, string>;
  user: string;
}

export function buildGuardLaunch(
  input: GuardLaunchInput,
  user = `vscode_${randomBytes(4).toString('hex')}`,
): GuardLaunch {
  const cli = join(input.extensionPath, 'dist', 'cli.js');
  const common = ['--db', profileUrl(input.profile), '--workspace', input.workspaceDir];
  return {
    command: input.nodePath,
    addUserArgs: [cli, 'guard', 'users', 'add', user, '--json', ...common],
    serveArgs: [cli, 'guard', '--listen', '127.0.0.1:0', ...common],
    cwd: input.workspaceDir,
    env: childEnv(input.electron, input.password, input.redisUrl),
    user,
  };
}

/** The port the guard printed when it started listening, or undefined while it has not. */
export function listeningPort(stderr: string): number | undefined {
  const match = /pg-agent guard: postgresql:\/\/[^:/]+:(\d+)\//.exec(stderr);
  return match ? Number(match[1]) : undefined;
}

/** The user's URL (printed by `users add` with the default port) pointed at the port the guard listens on. */
export function endpointUrl(userUrl: string, port: number): string {
  const url = new URL(userUrl);
  url.port = String(port);
  return url.toString();
}

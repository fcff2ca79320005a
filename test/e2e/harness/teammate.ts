// `pg-agent` (the built dist/cli.js) run by another person from a terminal while the window is open: its own
// process, as `user`, on the window's workspace (the caller passes `--workspace` where the command takes it).
import { join } from 'node:path';
import { pgAgentProcess } from '../../support/cliProcess';
import type { ProcessRun } from '../../support/cliProcess';

/**
 * `keys: 'none'`: only PATH, HOME and USER, and $XDG_CONFIG_HOME inside the workspace, so the person has no
 * signing keys of their own. `keys: 'runner'`: the runner's whole environment (its keys too), in the workspace.
 */
export function teammateCli(
  user: string,
  workspace: string,
  argv: readonly string[],
  keys: 'none' | 'runner' = 'none',
): Promise<ProcessRun> {
  if (keys === 'runner') {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
    return pgAgentProcess(argv, { cwd: workspace, env: { ...env, USER: user } });
  }
  return pgAgentProcess(argv, {
    cwd: process.cwd(),
    env: { HOME: process.env.HOME ?? '', USER: user, XDG_CONFIG_HOME: join(workspace, '.no-keys') },
  });
}

/**
 * Runs the built `pg-agent` (dist/cli.js) as its own process, as an agent with a shell would: only the
 * environment given (its own HOME and $XDG_CONFIG_HOME), no terminal, stdin closed.
 */
import { existsSync } from 'node:fs';
import { CLI_PATH } from './mcpClient';
import type { ProcessRun } from './toolRun';
import { runTool } from './toolRun';

export type { ProcessRun } from './toolRun';

export function pgAgentProcess(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<ProcessRun> {
  if (!existsSync(CLI_PATH)) throw new Error('dist/cli.js is missing: run npm run build first (npm test builds it).');
  return runTool(process.execPath, [CLI_PATH, ...argv], options);
}

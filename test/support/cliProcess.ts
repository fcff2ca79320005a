/**
 * Runs the built `pg-agent` (dist/cli.js) as its own process, as an agent with a shell would: only the
 * environment given (its own HOME and $XDG_CONFIG_HOME), no terminal, stdin closed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CLI_PATH } from './mcpClient';

export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function pgAgentProcess(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<ProcessRun> {
  if (!existsSync(CLI_PATH)) throw new Error('dist/cli.js is missing: run npm run build first (npm test builds it).');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...argv], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

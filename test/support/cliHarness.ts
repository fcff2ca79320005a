/** Runs `pg-agent` in-process with a captured terminal. */
import { runCli } from '../../src/cli/run';
import type { Env } from '../../src/core/db/connectionTarget';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runPgAgent(argv: string[], options: { env?: Env; cwd: string; stdin?: string }): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: () => Promise.resolve(options.stdin ?? ''),
    isTTY: false,
    env: options.env ?? {},
    cwd: options.cwd,
  });
  return { code, stdout, stderr };
}

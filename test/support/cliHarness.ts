/** Runs `pg-agent` in-process with a captured terminal. */
import { runCli } from '../../src/cli/run';
import type { Env } from '../../src/core/db/connectionTarget';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `answers` makes it a terminal: each prompt takes the next answer (and is recorded in `prompts`). */
export async function runPgAgent(
  argv: string[],
  options: { env?: Env; cwd: string; stdin?: string; answers?: string[] },
): Promise<CliRun & { prompts: string[] }> {
  const prompts: string[] = [];
  const answers = [...(options.answers ?? [])];
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
    isTTY: options.answers !== undefined,
    ...(options.answers !== undefined
      ? {
          prompt: (question: string) => {
            prompts.push(question);
            return Promise.resolve(answers.shift() ?? '');
          },
        }
      : {}),
    env: options.env ?? {},
    cwd: options.cwd,
  });
  return { code, stdout, stderr, prompts };
}

/** Runs `pg-agent` in-process with a captured terminal. */
import { runCli } from '../../src/cli/run';
import type { Env } from '../../src/core/db/connectionTarget';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `answers` makes it a terminal: each prompt takes the next answer (and is recorded in `prompts`); `passphrase`
 * answers every passphrase question (a key's, asked on the controlling terminal by the real CLI).
 */
export async function runPgAgent(
  argv: string[],
  options: { env?: Env; cwd: string; stdin?: string; answers?: string[]; passphrase?: string },
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
    // In-process, the person at the terminal typing their key's passphrase (the real CLI reads /dev/tty).
    ...(options.passphrase !== undefined ? { passphrase: () => Promise.resolve(options.passphrase ?? '') } : {}),
    env: options.env ?? {},
    cwd: options.cwd,
  });
  return { code, stdout, stderr, prompts };
}

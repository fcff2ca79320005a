/**
 * `pg-agent` as real processes, the way a coding agent with a shell runs it (its own session, no controlling
 * terminal, whatever it likes on stdin) and the way a person does (under a real pseudo-terminal, typing a
 * passphrase: test/support/ptyRun.py).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const PTY_RUN = fileURLToPath(new URL('./ptyRun.py', import.meta.url));

export interface ProcessRun {
  code: number;
  stdout: string;
  stderr: string;
}

function collect(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input: string | undefined,
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    // detached: a new session (setsid), so the child has no controlling terminal, as under an agent's tool call.
    const child = spawn(command, args, { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** The environment of one OS user's process: the test's own, with this person's config home. */
export function personEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: home, ...extra };
  delete env.REDIS_URL;
  delete env.PGAGENT_REDIS_PREFIX;
  return { ...env, ...extra };
}

/** `pg-agent` with no terminal; `input` goes to its stdin (an agent may pipe a passphrase: it must not count). */
export function runAsAgent(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<ProcessRun> {
  return collect(process.execPath, [CLI, ...args], env, input);
}

/** `pg-agent` under a pseudo-terminal; each passphrase question gets the next answer. stdout and stderr are merged. */
export async function runOnTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  answers: string[],
): Promise<ProcessRun & { answered: number }> {
  const run = await collect(
    'python3',
    [PTY_RUN, JSON.stringify([process.execPath, CLI, ...args]), JSON.stringify(answers)],
    env,
    undefined,
  );
  if (run.code !== 0) throw new Error(`ptyRun.py failed: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as { code: number; output: string; answered: number };
  return { code: result.code, stdout: result.output, stderr: result.output, answered: result.answered };
}

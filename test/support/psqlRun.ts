/** psql (Debian's) run once against a URL: `-c` commands, exit code and output, never throwing. */
import { execFile } from 'node:child_process';

export interface PsqlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * psql -X with these arguments (the URL among them). `application`: its PGAPPNAME; `interruptWhen`: Ctrl-C once
 * that holds (polled every 50 ms, at most 200 times), as a person would press it while a statement runs.
 */
export function runPsql(
  args: readonly string[],
  options: { application?: string; interruptWhen?: () => Promise<boolean> } = {},
): Promise<PsqlRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  if (options.application !== undefined) env.PGAPPNAME = options.application;
  return new Promise((resolve) => {
    const child = execFile('psql', ['-X', ...args], { env }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    const { interruptWhen } = options;
    if (interruptWhen) {
      void (async () => {
        for (let i = 0; i < 200 && !(await interruptWhen()); i++) await new Promise((r) => setTimeout(r, 50));
        child.kill('SIGINT');
      })();
    }
  });
}

/** Each of `commands` as a `-c`, unaligned tuples only, verbose errors. */
export function psqlRun(
  url: string,
  commands: string[],
  application = 'guard-psql-test',
  interruptWhen?: () => Promise<boolean>,
): Promise<PsqlRun> {
  const args = ['-q', '-A', '-t', '-v', 'VERBOSITY=verbose', url, ...commands.flatMap((c) => ['-c', c])];
  return runPsql(args, interruptWhen ? { application, interruptWhen } : { application });
}

export const ticketIn = (text: string): string => /ticket (tkt_[a-z0-9]+)/.exec(text)?.[1] ?? '';

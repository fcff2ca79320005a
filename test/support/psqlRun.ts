/** psql (Debian's) run once against a URL: `-c` commands, exit code and output, never throwing. */
import { execFile } from 'node:child_process';

export interface PsqlRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function psqlRun(url: string, commands: string[], application = 'guard-psql-test'): Promise<PsqlRun> {
  const args = ['-X', '-q', '-A', '-t', '-v', 'VERBOSITY=verbose', url, ...commands.flatMap((c) => ['-c', c])];
  return new Promise((resolve) => {
    execFile(
      'psql',
      args,
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PGAPPNAME: application } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export const ticketIn = (text: string): string => /ticket (tkt_[a-z0-9]+)/.exec(text)?.[1] ?? '';

/**
 * A program nobody here wrote (pgbench, python3, a migration tool's CLI, ps, cat) run once as its own process:
 * its exit code and output, never a throw for a failed exit. Only PATH and the environment given reach it.
 */
import { spawn } from 'node:child_process';

/** A finished process: its exit code (null when killed) and its whole output. */
export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ToolOptions {
  /** More environment on top of PATH (nothing else of the test's own). */
  env?: Record<string, string>;
  cwd?: string;
  /** Runs as this OS user (and its group of the same id): the test must be root. */
  uid?: number;
  /** Killed after this many ms (its code is then null). */
  timeout?: number;
}

/** stdin closed; stdout and stderr read whole, as text. */
export function runTool(command: string, args: readonly string[], options: ToolOptions = {}): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeout,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Where pgbench connects: its -h/-p/-U flags and database, and the password in its environment. */
export interface PgbenchTarget {
  args: string[];
  env: Record<string, string>;
}

/** pgbench's connection to `url` (a guard's, or the database's own) and the database the URL names. */
export function pgbenchTarget(url: string): PgbenchTarget {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.slice(1));
  return {
    args: ['-h', parsed.hostname, '-p', parsed.port || '5432', '-U', parsed.username || 'postgres', database],
    env: parsed.password ? { PGPASSWORD: decodeURIComponent(parsed.password) } : {},
  };
}

/** `pgbench <args>` against the target (at most two minutes). */
export const pgbench = (args: readonly string[], target: PgbenchTarget): Promise<ProcessRun> =>
  runTool('pgbench', [...args, ...target.args], { env: target.env, timeout: 120_000 });

/** `pgbench -i -s 1 -q` straight on the database: pgbench_accounts (100,000 rows, abalance 0) and the rest. */
export const pgbenchInit = (databaseUrl: string): Promise<ProcessRun> =>
  pgbench(['-i', '-s', '1', '-q'], pgbenchTarget(databaseUrl));

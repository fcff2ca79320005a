/**
 * A real `pg-agent guard` process (dist/cli.js) in front of a scratch database, for the guard's
 * integration tests: started on a free loopback port, with a guard user, stopped (or killed) by the test.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Ticket } from '../../src/core/approvals/ticket';
import { CLI_PATH } from './mcpClient';
import { readableBy } from './readableCopy';
import { pgAgentProcess } from './cliProcess';
import type { ScratchDatabase } from './scratchDatabase';
import { createScratchDatabase, execSql, queryValue } from './scratchDatabase';

export interface GuardProcess {
  child: ChildProcess;
  workspace: string;
  port: number;
  /** postgresql://alice:…@127.0.0.1:PORT/DB */
  url: string;
  env: Record<string, string>;
  stderr(): string;
  /** Ctrl+C, and waits for the exit (at most 30 s: then killed, and an error). */
  stop(): Promise<void>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** `pg-agent <argv>` in the guard's workspace, against the same database. */
  pgAgent(argv: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `args`: more `pg-agent guard` flags (e.g. `--hold wait=60`); `uid` (as root): the guard runs as that OS user, its workspace its own (0700). */
export async function startGuardProcess(
  databaseUrl: string,
  options: {
    user?: string;
    workspace?: string;
    args?: readonly string[];
    uid?: number;
    /** More environment for the guard and its pgAgent calls (e.g. REDIS_URL and PGAGENT_REDIS_PREFIX). */
    env?: Record<string, string>;
    /** Another build of dist/cli.js (a bench's baseline). */
    cli?: string;
  } = {},
): Promise<GuardProcess> {
  if (!existsSync(CLI_PATH)) throw new Error('dist/cli.js is missing: run npm run build first (npm test builds it).');
  const workspace = options.workspace ?? mkdtempSync(join(tmpdir(), 'pgagent-guard-'));
  const home = join(workspace, 'home');
  mkdirSync(home, { recursive: true });
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), USER: 'guard-test', ...options.env };
  const pgAgent = (argv: readonly string[]) =>
    pgAgentProcess([...argv, '--workspace', workspace, '--db', databaseUrl], { cwd: workspace, env });
  const user = options.user ?? 'alice';
  const added = await pgAgent(['guard', 'users', 'add', user, '--json']);
  if (added.code !== 0) throw new Error(`guard users add failed: ${added.stderr}`);
  const { url: template } = JSON.parse(added.stdout) as { url: string };
  if (options.uid !== undefined) {
    execFileSync('chown', ['-R', `${options.uid}:${options.uid}`, workspace]);
    chmodSync(workspace, 0o700);
  }
  // Another OS user runs what it can read (a clone under /root is out of its reach: it gets a copy).
  const cli = options.uid !== undefined ? readableBy(options.uid).cli : (options.cli ?? CLI_PATH);
  const child = spawn(
    process.execPath,
    [cli, 'guard', '--listen', '127.0.0.1:0', '--workspace', workspace, '--db', databaseUrl, ...(options.args ?? [])],
    {
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /pg-agent guard: postgresql:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the guard exited (${code}) before listening: ${stderr}`)));
  });
  const url = new URL(template);
  url.port = String(port);
  return {
    child,
    workspace,
    port,
    url: url.toString(),
    env,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGINT');
      // A guard that does not stop is a defect (something it left armed): said as such, not as a hook timeout.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 30_000)));
      const outcome = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (outcome === 'late') {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`the guard did not exit within 30 s of Ctrl+C; its stderr:\n${stderr}`);
      }
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    pgAgent,
  };
}

/**
 * Upstream sessions of `application` on the database behind a guard (that database only: another test may use
 * the same name); with `gone`, polled (at most 10 s, no timed assertion) until there are none, as a session the
 * guard ends goes away a moment later.
 */
export async function sessionsOf(databaseUrl: string, application: string, gone = true): Promise<number> {
  const sql = `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '${application}'`;
  for (let i = 0; i < 100; i++) {
    const n = Number(await queryValue(databaseUrl, sql));
    if (!gone || n === 0) return n;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Number(await queryValue(databaseUrl, sql));
}

/** Locks held by the upstream sessions of `application`. */
export async function locksOf(databaseUrl: string, application: string): Promise<number> {
  return Number(
    await queryValue(
      databaseUrl,
      `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = '${application}'`,
    ),
  );
}

/** A ticket as the guard's file store keeps it (`.pgagent/approvals/<id>.json` in its workspace), read now. */
export const storedTicket = (guard: Pick<GuardProcess, 'workspace'>, id: string): Ticket =>
  JSON.parse(readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${id}.json`), 'utf8')) as Ticket;

/** `t (id int PRIMARY KEY, v text)` with rows 1..`rows`, v = 'v' || id: the table most guard tests read. */
export const tableOfRows = (rows: number): string =>
  `CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, ${rows}) g;`;

/**
 * A scratch database (`prefix`), each of `setup` run in it in turn, and a guard in front of it; the database is
 * dropped again when the guard does not start. Stopped by stopGuarded.
 */
export async function guardedDatabase(
  prefix: string,
  setup: readonly string[],
  options: Parameters<typeof startGuardProcess>[1] = {},
): Promise<{ db: ScratchDatabase; guard: GuardProcess }> {
  const db = await createScratchDatabase(prefix);
  try {
    for (const sql of setup) await execSql(db.url, sql);
    return { db, guard: await startGuardProcess(db.url, options) };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

/** The guard stopped (its stderr printed first under GUARD_DEBUG), then its database dropped. */
export async function stopGuarded(guard: GuardProcess | undefined, db: ScratchDatabase | undefined): Promise<void> {
  if (process.env.GUARD_DEBUG) console.log(guard?.stderr());
  await guard?.stop();
  await db?.drop();
}

/**
 * Debian's PgBouncer as the bench's peer: a pooler that judges nothing, in session mode (one server session per
 * client, as the guard's default), run as a child process with its own config and auth file in a temp dir.
 * Installed with apt-get when missing; undefined (the caller prints a loud line) when it cannot be had.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function found(): boolean {
  try {
    execFileSync('pgbouncer', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function install(): string | undefined {
  if (found()) return undefined;
  try {
    execFileSync('apt-get', ['install', '-y', '-q', 'pgbouncer'], { stdio: 'ignore', timeout: 300_000 });
  } catch (error) {
    return `apt-get install -y pgbouncer failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
  return found() ? undefined : 'pgbouncer is not on PATH after apt-get install';
}

export interface PgBouncer {
  url: string;
  version: string;
  pid: number;
  stop(): void;
}

/** `port`: PgBouncer has no port 0; the bench's own (PGBOUNCER_BENCH_PORT, default 16310). */
export async function startPgBouncer(upstreamUrl: string, port: number): Promise<PgBouncer | string> {
  const problem = install();
  if (problem) return problem;
  const upstream = new URL(upstreamUrl);
  const user = decodeURIComponent(upstream.username || 'postgres');
  const database = upstream.pathname.slice(1);
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-bench-pgbouncer-'));
  chmodSync(dir, 0o755);
  const password = decodeURIComponent(upstream.password);
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" "${password}"\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${database} = host=${upstream.hostname} port=${upstream.port || 5432} dbname=${database} user=${user}${password ? ` password=${password}` : ''}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = session',
      'max_client_conn = 1000',
      'default_pool_size = 100',
      'ignore_startup_parameters = extra_float_digits',
      // Its log goes to a file: the bench runs pgbench synchronously, so nobody would read a pipe that fills.
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      'log_connections = 0',
      'log_disconnections = 0',
      // As root it must drop to another user; its files are readable by that user.
      ...(process.getuid?.() === 0 ? ['user = postgres'] : []),
      '',
    ].join('\n'),
  );
  const version = execFileSync('pgbouncer', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  writeFileSync(join(dir, 'pgbouncer.log'), '');
  chmodSync(join(dir, 'pgbouncer.log'), 0o666);
  const child = spawn('pgbouncer', [join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  const log = () => readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
  const stop = () => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when it listens (its log says so); an early exit is the problem.
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  let ready: string | undefined = 'pgbouncer did not start in 10 s';
  for (let waited = 0; waited < 10_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (exited !== undefined) {
      ready = `pgbouncer exited (${exited}): ${log()}`;
      break;
    }
    if (/listening on 127\.0\.0\.1/.test(log())) {
      ready = undefined;
      break;
    }
  }
  if (ready?.endsWith('10 s')) ready += `: ${log()}`;
  if (ready) {
    stop();
    return ready;
  }
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), version, pid: child.pid!, stop };
}

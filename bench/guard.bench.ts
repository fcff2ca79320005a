// What `pg-agent guard` costs a client on loopback (SPEC §7: a read < 0.3 ms more than direct at p50;
// `pgbench -S` keeps ≥ 70 % of the direct throughput with 8 clients): the same read direct and through the
// guard (simple and extended protocol), pgbench -S with 1 and 8 clients both ways in the same run, and the
// guard process's memory per connected client. Needs dist/cli.js (npm run bench builds it) and pgbench.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startGuardProcess } from '../test/support/guardProcess';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { percentile, report, timeRuns } from './stats';

const READ = 'SELECT abalance FROM pgbench_accounts WHERE aid = 4242';

type Mode = 'simple' | 'simple, a new literal each time' | 'extended';

async function latency(url: string, label: string, mode: Mode): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let aid = 1;
  try {
    const run = () =>
      mode === 'extended'
        ? client.query('SELECT abalance FROM pgbench_accounts WHERE aid = $1', [4242])
        : client.query(mode === 'simple' ? READ : `SELECT abalance FROM pgbench_accounts WHERE aid = ${aid++}`);
    await timeRuns(50, run);
    const times = await timeRuns(1000, run);
    report(`${label} (${mode}), p50 of 1000`, percentile(times, 50), 'ms');
    report(`${label} (${mode}), p95 of 1000`, percentile(times, 95), 'ms');
    return percentile(times, 50);
  } finally {
    await client.end();
  }
}

function pgbench(url: string, clients: number): number {
  const u = new URL(url);
  const out = execFileSync('pgbench', ['-S', '-n', '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', '5', '-h', u.hostname, '-p', u.port || '5432', '-U', u.username, u.pathname.slice(1)], {
    env: { ...process.env, PGPASSWORD: decodeURIComponent(u.password) },
    encoding: 'utf8',
  });
  return Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);
}

function rssKib(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench_guard');
  const u = new URL(scratch.url);
  execFileSync('pgbench', ['-i', '-s', '1', '-q', '-h', u.hostname, '-p', u.port || '5432', '-U', u.username || 'postgres', scratch.name], { stdio: 'ignore' });
  const guard = await startGuardProcess(scratch.url);
  try {
    for (const mode of ['simple', 'simple, a new literal each time', 'extended'] as const) {
      const direct = await latency(scratch.url, 'read direct', mode);
      const through = await latency(guard.url, 'read through the guard', mode);
      report(`guard cost per read at p50 (${mode})`, through - direct, 'ms');
    }
    for (const clients of [1, 8]) {
      const direct = pgbench(scratch.url, clients);
      const through = pgbench(guard.url, clients);
      report(`pgbench -S ${clients} client(s) direct`, direct, 'tps');
      report(`pgbench -S ${clients} client(s) through the guard`, through, 'tps');
      report(`  guard keeps of direct throughput (${clients} client(s))`, (100 * through) / direct, '%');
    }
    const pid = guard.child.pid!;
    const before = rssKib(pid);
    const idle: pg.Client[] = [];
    for (let i = 0; i < 50; i++) {
      const client = new pg.Client({ connectionString: guard.url });
      await client.connect();
      await client.query(READ);
      idle.push(client);
    }
    report('guard RSS growth per connected client (50 clients)', (rssKib(pid) - before) / 50, 'KiB');
    await Promise.all(idle.map((c) => c.end()));
  } finally {
    await guard.stop();
    await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

// What `pg-agent guard` costs a client on loopback (SPEC §7: a read < 0.3 ms more than direct at p50;
// `pgbench -S` keeps ≥ 70 % of the direct throughput with 8 clients): the same read direct and through the
// guard (simple and extended protocol, alternating query by query), pgbench -S (simple with 1 and 8 clients,
// extended and prepared with 8) direct then through the guard in rounds, and the
// guard process's memory per connected client. Needs dist/cli.js (npm run bench builds it) and pgbench.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startGuardProcess } from '../test/support/guardProcess';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { percentile, report, timeRuns } from './stats';

const READ = 'SELECT abalance FROM pgbench_accounts WHERE aid = 4242';

type Mode = 'simple' | 'simple, a new literal each time' | 'extended';

/** The same reads direct and through the guard, alternating query by query (both see the same machine load). */
async function latency(directUrl: string, guardUrl: string, mode: Mode): Promise<void> {
  const direct = new pg.Client({ connectionString: directUrl });
  const guarded = new pg.Client({ connectionString: guardUrl });
  await direct.connect();
  await guarded.connect();
  let aid = 1;
  const run = (client: pg.Client) =>
    mode === 'extended'
      ? client.query('SELECT abalance FROM pgbench_accounts WHERE aid = $1', [4242])
      : client.query(mode === 'simple' ? READ : `SELECT abalance FROM pgbench_accounts WHERE aid = ${aid++}`);
  try {
    const times = { direct: [] as number[], guard: [] as number[] };
    for (let i = 0; i < 1050; i++) {
      const [d] = await timeRuns(1, () => run(direct));
      const [g] = await timeRuns(1, () => run(guarded));
      // The first 50 of each warm up (JIT, caches).
      if (i >= 50) {
        times.direct.push(d!);
        times.guard.push(g!);
      }
    }
    for (const [label, values] of [['direct', times.direct], ['through the guard', times.guard]] as const) {
      report(`read ${label} (${mode}), p50 / p95 of 1000`, `${percentile(values, 50).toFixed(3)} / ${percentile(values, 95).toFixed(3)}`, 'ms');
    }
    report(`  guard cost per read at p50 (${mode})`, percentile(times.guard, 50) - percentile(times.direct, 50), 'ms');
  } finally {
    await direct.end();
    await guarded.end();
  }
}

function pgbench(url: string, clients: number, protocol: string): number {
  const u = new URL(url);
  const out = execFileSync('pgbench', ['-S', '-n', '-M', protocol, '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(SECONDS), '-h', u.hostname, '-p', u.port || '5432', '-U', u.username, u.pathname.slice(1)], {
    env: { ...process.env, PGPASSWORD: decodeURIComponent(u.password) },
    encoding: 'utf8',
  });
  return Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);
}

/** Rounds of pgbench direct, then through the guard (GUARD_BENCH_ROUNDS, default 3); medians and the median ratio. */
const ROUNDS = Number(process.env.GUARD_BENCH_ROUNDS ?? 3);
const SECONDS = 5;

function throughput(directUrl: string, guardUrl: string, clients: number, protocol: string): void {
  const direct: number[] = [];
  const through: number[] = [];
  const kept: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    direct.push(pgbench(directUrl, clients, protocol));
    through.push(pgbench(guardUrl, clients, protocol));
    kept.push((100 * through[round]!) / direct[round]!);
  }
  const what = `pgbench -S -M ${protocol}, ${clients} client(s)`;
  report(`${what}: direct / guard, median of ${ROUNDS}`, `${percentile(direct, 50).toFixed(0)} / ${percentile(through, 50).toFixed(0)}`, 'tps');
  report(`  guard keeps of direct (median; min-max)`, `${percentile(kept, 50).toFixed(1)} (${Math.min(...kept).toFixed(1)}-${Math.max(...kept).toFixed(1)})`, '%');
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
    for (const mode of ['simple', 'simple, a new literal each time', 'extended'] as const) await latency(scratch.url, guard.url, mode);
    throughput(scratch.url, guard.url, 1, 'simple');
    for (const protocol of ['simple', 'extended', 'prepared']) throughput(scratch.url, guard.url, 8, protocol);
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

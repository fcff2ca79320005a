// What `pg-agent guard` costs a client on loopback, against its peer in the same run: the same read direct and
// through the guard (simple and extended protocol, alternating query by query; p50 over direct), pgbench -S
// (simple and extended with 1, 8 and 64 clients, prepared with 8) direct, through Debian's PgBouncer (session
// mode; bench/pgbouncer.ts installs and starts it, or a loud line says it is missing) and through the guard in
// the same rounds, with the ratios guard/PgBouncer, guard/direct and PgBouncer/direct, and the guard process's
// memory per connected client. Needs dist/cli.js (npm run bench builds it) and pgbench.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startGuardProcess } from '../test/support/guardProcess';
import { createScratchDatabase } from '../test/support/scratchDatabase';
import { startPgBouncer } from './pgbouncer';
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
    for (const [label, values] of [
      ['direct', times.direct],
      ['through the guard', times.guard],
    ] as const) {
      report(
        `read ${label} (${mode}), p50 / p95 of 1000`,
        `${percentile(values, 50).toFixed(3)} / ${percentile(values, 95).toFixed(3)}`,
        'ms',
      );
    }
    report(`  guard cost per read at p50 (${mode})`, percentile(times.guard, 50) - percentile(times.direct, 50), 'ms');
  } finally {
    await direct.end();
    await guarded.end();
  }
}

/** pgbench run asynchronously: the guard's and PgBouncer's output pipes are read while it runs. */
async function pgbench(url: string, clients: number, protocol: string): Promise<{ tps: number; transactions: number }> {
  const u = new URL(url);
  const { stdout: out, stderr } = await promisify(execFile)(
    'pgbench',
    [
      '-S',
      '-n',
      '-M',
      protocol,
      '-c',
      String(clients),
      '-j',
      String(Math.min(clients, 2)),
      '-T',
      String(SECONDS),
      '-h',
      u.hostname,
      '-p',
      u.port || '5432',
      '-U',
      u.username,
      u.pathname.slice(1),
    ],
    {
      env: { ...process.env, PGPASSWORD: decodeURIComponent(u.password) },
      encoding: 'utf8',
    },
  ).catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? '',
    stderr: error.stderr ?? 'pgbench failed',
  }));
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);
  if (Number.isNaN(tps))
    console.log(
      `pgbench gave no tps (${clients} clients, ${protocol}, ${u.port}): ${out.slice(-300)} ${stderr.slice(-300)}`,
    );
  return { tps, transactions: Number(/actually processed: (\d+)/.exec(out)?.[1] ?? NaN) };
}

/** CPU time a process has used so far, user and system, in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** Rounds of pgbench (GUARD_BENCH_ROUNDS, default 3; GUARD_BENCH_SECONDS each, default 5); medians, and ratios per round. */
const ROUNDS = Number(process.env.GUARD_BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.GUARD_BENCH_SECONDS ?? 5);

/**
 * Direct, PgBouncer (when it runs) and the guard, one after the other in each round (all three see the same
 * machine load in a round): the median tps of each and the median of the per-round ratios.
 */
async function throughput(
  peers: { label: string; url: string; pid?: number }[],
  clients: number,
  protocol: string,
): Promise<void> {
  const tps = peers.map(() => [] as number[]);
  // CPU per transaction of the proxy process itself (the guard, PgBouncer): steadier than tps on a busy machine.
  // User time is the proxy's own work; system time is mostly the kernel's loopback reads and writes, which every
  // proxy in the middle pays alike.
  const cpu = peers.map(() => [] as number[]);
  const userCpu = peers.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, peer] of peers.entries()) {
      const before = peer.pid ? cpuMs(peer.pid) : undefined;
      const run = await pgbench(peer.url, clients, protocol);
      tps[i]!.push(run.tps);
      if (!peer.pid || !before || !(run.transactions > 0)) continue;
      const after = cpuMs(peer.pid);
      const user = after.user - before.user;
      cpu[i]!.push((1000 * (user + after.system - before.system)) / run.transactions);
      userCpu[i]!.push((1000 * user) / run.transactions);
    }
  const what = `pgbench -S -M ${protocol}, ${clients} client(s)`;
  report(
    `${what}: ${peers.map((p) => p.label).join(' / ')}`,
    tps.map((values) => percentile(values, 50).toFixed(0)).join(' / '),
    'tps',
  );
  const ratio = (a: number, b: number, label: string) => {
    const per = tps[a]!.map((value, round) => value / tps[b]![round]!);
    report(
      `  ${label} (median; min-max)`,
      `${percentile(per, 50).toFixed(2)} (${Math.min(...per).toFixed(2)}-${Math.max(...per).toFixed(2)})`,
    );
  };
  const guard = peers.findIndex((p) => p.label === 'guard');
  const bouncer = peers.findIndex((p) => p.label === 'pgbouncer');
  if (bouncer >= 0) ratio(guard, bouncer, 'guard/PgBouncer');
  const base = peers.findIndex((p) => p.label === 'baseline');
  if (base >= 0 && bouncer >= 0) ratio(base, bouncer, 'baseline/PgBouncer');
  if (base >= 0) ratio(guard, base, 'guard/baseline');
  ratio(guard, 0, 'guard/direct');
  if (bouncer >= 0) ratio(bouncer, 0, 'PgBouncer/direct');
  const used = peers.flatMap((p, i) =>
    cpu[i]!.length > 0
      ? [`${p.label} ${percentile(cpu[i]!, 50).toFixed(1)} (user ${percentile(userCpu[i]!, 50).toFixed(1)})`]
      : [],
  );
  if (used.length > 0) report('  CPU per transaction of the proxy process (median)', used.join(' / '), 'µs');
}

function rssKib(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
}

async function main(): Promise<void> {
  const scratch = await createScratchDatabase('pgagent_bench_guard');
  const u = new URL(scratch.url);
  execFileSync(
    'pgbench',
    ['-i', '-s', '1', '-q', '-h', u.hostname, '-p', u.port || '5432', '-U', u.username || 'postgres', scratch.name],
    { stdio: 'ignore' },
  );
  try {
    await runs(scratch.url);
    await memory(scratch.url);
  } finally {
    await scratch.drop();
  }
}

/** Latency, then throughput direct, through PgBouncer and through the guard in the same rounds. */
async function runs(dbUrl: string): Promise<void> {
  const guard = await startGuardProcess(dbUrl);
  // GUARD_BENCH_BASELINE=path/to/cli.js: another build's guard in the same rounds (before/after on the same load);
  // GUARD_BENCH_BASELINE=js: this build without its native relay (PGAGENT_GUARD_NATIVE=0), its JavaScript path.
  const baselineCli = process.env.GUARD_BENCH_BASELINE;
  const baseline =
    baselineCli === 'js'
      ? await startGuardProcess(dbUrl, { env: { PGAGENT_GUARD_NATIVE: '0' } })
      : baselineCli
        ? await startGuardProcess(dbUrl, { cli: baselineCli })
        : undefined;
  const bouncer = await startPgBouncer(dbUrl, Number(process.env.PGBOUNCER_BENCH_PORT ?? 16310));
  if (typeof bouncer === 'string')
    console.log(`\n*** NO PGBOUNCER IN THIS RUN: the guard is compared with direct only (${bouncer}) ***\n`);
  else console.log(`peer: ${bouncer.version}, session mode, in this run`);
  try {
    for (const mode of ['simple', 'simple, a new literal each time', 'extended'] as const)
      await latency(dbUrl, guard.url, mode);
    const peers = [
      { label: 'direct', url: dbUrl },
      ...(typeof bouncer === 'string' ? [] : [{ label: 'pgbouncer', url: bouncer.url, pid: bouncer.pid }]),
      { label: 'guard', url: guard.url, pid: guard.child.pid! },
      ...(baseline ? [{ label: 'baseline', url: baseline.url, pid: baseline.child.pid! }] : []),
    ];
    const clientCounts = (process.env.GUARD_BENCH_CLIENTS ?? '1,8,64').split(',').map(Number);
    for (const protocol of ['simple', 'extended'])
      for (const clients of clientCounts) await throughput(peers, clients, protocol);
    await throughput(peers, 8, 'prepared');
  } finally {
    if (typeof bouncer !== 'string') bouncer.stop();
    await guard.stop();
    await baseline?.stop();
  }
}

/** The clients connected (each after one read), and the way to end them. */
async function connectClients(url: string, n: number): Promise<{ end(): Promise<void> }> {
  const clients: pg.Client[] = [];
  for (let i = 0; i < n; i++) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', (error) => console.error(`a client of the memory run failed: ${error.message}`));
    await client.connect();
    await client.query(READ);
    clients.push(client);
  }
  return { end: async () => void (await Promise.all(clients.map((c) => c.end()))) };
}

/**
 * RSS per connected client, on a guard of its own (after the runs above, the first guard's heap is mostly
 * garbage, which a collection during the count returns: one run measured -257 KiB per client). A first round
 * of clients connects and leaves (code loaded, compiled, buffers sized), then the count: RSS before and with
 * CLIENTS connected. Garbage not yet collected counts too: an upper bound. Each guard client has its own
 * upstream session, so CLIENTS stays well under max_connections (100 by default).
 */
async function memory(dbUrl: string): Promise<void> {
  const CLIENTS = 40;
  const fresh = await startGuardProcess(dbUrl);
  try {
    const pid = fresh.child.pid!;
    await (await connectClients(fresh.url, CLIENTS)).end();
    const before = rssKib(pid);
    const counted = await connectClients(fresh.url, CLIENTS);
    report(
      `guard RSS growth per connected client (${CLIENTS} clients, after a first round of ${CLIENTS})`,
      (rssKib(pid) - before) / CLIENTS,
      'KiB',
    );
    await counted.end();
  } finally {
    await fresh.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

// What `pg-agent guard` costs a client on loopback (SPEC §7: a read < 0.3 ms more than direct at p50;
// `pgbench -S` keeps ≥ 70 % of the direct throughput with 8 clients): the same read direct and through the
// guard (simple and extended protocol, alternating query by query), pgbench -S (simple with 1 and 8 clients,
// extended and prepared with 8) direct then through the guard in rounds, the same for a bare socket pipe (the
// floor for any Node.js proxy here), and the
// guard process's memory per connected client. Needs dist/cli.js (npm run bench builds it) and pgbench.
import { execFileSync, spawn } from 'node:child_process';
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

function pgbench(url: string, clients: number, protocol: string): number {
  const u = new URL(url);
  const out = execFileSync(
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
  );
  return Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);
}

/** Rounds of pgbench direct, then through the guard (GUARD_BENCH_ROUNDS, default 3); medians and the median ratio. */
const ROUNDS = Number(process.env.GUARD_BENCH_ROUNDS ?? 3);
const SECONDS = 5;

function throughput(directUrl: string, guardUrl: string, clients: number, protocol: string, via = 'guard'): void {
  const direct: number[] = [];
  const through: number[] = [];
  const kept: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    direct.push(pgbench(directUrl, clients, protocol));
    through.push(pgbench(guardUrl, clients, protocol));
    kept.push((100 * through[round]!) / direct[round]!);
  }
  const what = `pgbench -S -M ${protocol}, ${clients} client(s)`;
  report(
    `${what}: direct / ${via}, median of ${ROUNDS}`,
    `${percentile(direct, 50).toFixed(0)} / ${percentile(through, 50).toFixed(0)}`,
    'tps',
  );
  report(
    `  ${via} keeps of direct (median; min-max)`,
    `${percentile(kept, 50).toFixed(1)} (${Math.min(...kept).toFixed(1)}-${Math.max(...kept).toFixed(1)})`,
    '%',
  );
}

/**
 * The floor for any proxy written in Node.js on this machine: a bare socket pipe (no parsing, no judging) in
 * its own process, pgbench direct then through it in the same rounds. What the guard keeps is read against it.
 */
async function startPipe(upstream: URL): Promise<{ url: string; stop(): void }> {
  const script = `const net = require('node:net');
const server = net.createServer((c) => {
  const u = net.connect(${Number(upstream.port || 5432)}, ${JSON.stringify(upstream.hostname)});
  c.setNoDelay(true); u.setNoDelay(true); c.pipe(u); u.pipe(c);
  c.on('error', () => u.destroy()); u.on('error', () => c.destroy());
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the pipe exited (${code})`)));
  });
  const url = new URL(upstream.toString());
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), stop: () => child.kill() };
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

/** Latency and throughput, direct and through the guard (and through a bare pipe). */
async function runs(dbUrl: string): Promise<void> {
  const guard = await startGuardProcess(dbUrl);
  try {
    for (const mode of ['simple', 'simple, a new literal each time', 'extended'] as const)
      await latency(dbUrl, guard.url, mode);
    throughput(dbUrl, guard.url, 1, 'simple');
    for (const protocol of ['simple', 'extended', 'prepared']) throughput(dbUrl, guard.url, 8, protocol);
    const pipe = await startPipe(new URL(dbUrl));
    try {
      for (const clients of [1, 8]) throughput(dbUrl, pipe.url, clients, 'simple', 'a bare Node.js socket pipe');
    } finally {
      pipe.stop();
    }
  } finally {
    await guard.stop();
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

/**
 * A thousand clients on a pool of twenty: `pgbench -S -c 1000` through `pg-agent guard --pool transaction
 * --pool-size 20`, the upstream sessions counted by the server (pg_stat_activity) while it runs, the guard's
 * memory per client read from /proc and printed (not asserted), and pgbench's tps through a pool and through
 * session mode in the same run, printed (a measurement, never a timed assertion).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, postgresAvailable } from '../../support/services';

const CLIENTS = 1000;
const POOL = 20;
/** The core's own pool in the guard (previews, checks, approved runs): postgresDb.ts `maxConnections` default. */
const GUARD_OWN = 4;

/** pgbench under a raised open-files limit (a thousand sockets), its output when it exits. */
function pgbench(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('sh', ['-c', 'ulimit -n 4096 2>/dev/null; exec pgbench "$@"', 'sh', ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function rssKiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

function openFilesLimit(pid: number): number {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  return Number(line?.split(/\s{2,}/)[1] ?? 0);
}

const tps = (out: string) => Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);

describe.skipIf(!postgresAvailable)(`pg-agent guard: ${CLIENTS} clients on a transaction pool of ${POOL}`, () => {
  let db: ScratchDatabase;
  let pooled: GuardProcess;
  let session: GuardProcess;
  const argsOf = (guard: GuardProcess) => {
    const url = new URL(guard.url);
    return {
      env: { PGPASSWORD: decodeURIComponent(url.password) },
      args: ['-h', url.hostname, '-p', url.port, '-U', url.username, db.name],
    };
  };

  beforeAll(async () => {
    db = await createScratchDatabase('i38p_pool1k');
    const direct = new URL(db.url);
    const init = await pgbench(
      ['-i', '-s', '1', '-q', '-h', direct.hostname, '-p', direct.port, '-U', 'postgres', db.name],
      {},
    );
    expect(init.code).toBe(0);
    pooled = await startGuardProcess(db.url, {
      args: ['--pool', 'transaction', '--pool-size', String(POOL), '--pool-timeout', '300'],
    });
  }, 120_000);

  afterAll(async () => {
    await pooled?.stop();
    await session?.stop();
    await db?.drop();
  });

  it(`pgbench -S -c ${CLIENTS}: every transaction succeeds, never more than ${POOL} upstream sessions`, async () => {
    const pid = pooled.child.pid!;
    const limit = openFilesLimit(pid);
    console.log(`guard open-files limit: ${limit}`);
    expect(limit, 'the guard needs an open-files limit above its clients (ulimit -n)').toBeGreaterThan(
      CLIENTS + POOL + 50,
    );
    const { env, args } = argsOf(pooled);
    // Warm: the verdict cache and the pool's first session, so the baseline RSS is the guard's own.
    expect((await pgbench(['-S', '-n', '-c', '1', '-t', '20', ...args], env)).code).toBe(0);
    const before = rssKiB(pid);
    let peakRss = before;
    let peakPool = 0;
    let peakAll = 0;
    let running = true;
    const bench = pgbench(['-S', '-n', '-c', String(CLIENTS), '-j', '2', '-t', '20', ...args], env).finally(
      () => (running = false),
    );
    while (running) {
      const [pool, all] = String(
        await queryValue(
          db.url,
          "SELECT count(*) FILTER (WHERE application_name <> 'postgres-agent') || ',' || count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
        ),
      )
        .split(',')
        .map(Number);
      peakPool = Math.max(peakPool, pool!);
      peakAll = Math.max(peakAll, all!);
      peakRss = Math.max(peakRss, rssKiB(pid));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const result = await bench;
    console.log(
      `pgbench -S -n -c ${CLIENTS} -j 2 -t 20 through --pool transaction --pool-size ${POOL}: ${tps(result.stdout)} tps; ` +
        `upstream sessions at most ${peakPool} (all of the database's sessions: ${peakAll}); guard RSS ${before} KiB before, ` +
        `${peakRss} KiB at most while ${CLIENTS} clients were connected: ${((peakRss - before) / CLIENTS).toFixed(1)} KiB per client (busy shared machine)`,
    );
    expect(result.stdout).toContain(`number of transactions actually processed: ${CLIENTS * 20}/${CLIENTS * 20}`);
    expect(result.stdout).toContain('number of failed transactions: 0');
    expect(peakPool).toBeGreaterThan(0);
    expect(peakPool).toBeLessThanOrEqual(POOL);
    expect(peakAll).toBeLessThanOrEqual(POOL + GUARD_OWN);
  }, 300_000);

  it('pgbench -S tps through a transaction pool and through session mode, same run (printed)', async () => {
    // Started now, so its own connections never counted above.
    session = await startGuardProcess(db.url);
    const rounds: Record<string, number[]> = { session: [], pool: [] };
    for (let round = 0; round < 3; round++) {
      for (const [mode, guard] of [
        ['session', session],
        ['pool', pooled],
      ] as const) {
        const { env, args } = argsOf(guard);
        const out = await pgbench(['-S', '-n', '-c', '8', '-j', '2', '-T', '5', ...args], env);
        expect(out.stdout).toContain('number of failed transactions: 0');
        rounds[mode]!.push(tps(out.stdout));
      }
    }
    console.log(
      `pgbench -S -n -c 8 -j 2 -T 5, 3 rounds alternating (busy shared machine): session ${rounds.session!.map((t) => t.toFixed(0)).join(', ')} tps; ` +
        `transaction pool of ${POOL} ${rounds.pool!.map((t) => t.toFixed(0)).join(', ')} tps`,
    );
  }, 120_000);
});

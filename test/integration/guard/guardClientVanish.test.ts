/**
 * `pg-agent guard` (dist/cli.js, its own process) when a client vanishes in the middle of something, and
 * when a client stops reading: psql killed (-9) in the middle of a `COPY … FROM STDIN` (inside a transaction,
 * where the COPY runs upstream, and outside one, where the guard keeps the data), a client gone in the
 * middle of an extended-protocol pipeline (no Sync sent), and a client that asks for a big result and never
 * reads it. The guard stays up, nothing is half-written (the table as before), no upstream session is left
 * (pg_stat_activity, polled), and its memory stays bounded (RSS from /proc, a generous bound, never a time).
 * A client gone during a `--hold wait` is in guardHeldWait.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, locksOf, sessionsOf, stopGuarded, tableOfRows } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { connect, streamOf } from '../../support/pgClients';

/** Resident memory of a process (MiB), from /proc. */
const rssMib = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

describe.skipIf(!postgresAvailable)('pg-agent guard when a client vanishes or stops reading', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const table = async () =>
    String(await queryValue(db.url, "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM t"));
  const tickets = () => {
    const dir = join(guard.workspace, '.pgagent', 'approvals');
    return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')).length : 0;
  };
  /** Polls (bounded) until an upstream session of `application` is in this state. */
  const upstreamIn = async (application: string, where: string): Promise<boolean> => {
    for (let i = 0; i < 300; i++) {
      const n = Number(
        await queryValue(
          db.url,
          `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '${application}' AND ${where}`,
        ),
      );
      if (n > 0) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  };
  const stillServes = async () => {
    expect(guard.child.exitCode).toBeNull();
    const other = await connect(guard.url, 'i38o-bystander');
    try {
      expect((await other.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 3 }]);
    } finally {
      await other.end();
    }
  };

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('i38o_vanish', [tableOfRows(3)]));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  /** psql reading its script from a pipe that is never closed; killed with -9 by the test. */
  const psqlFromPipe = (application: string, script: string) => {
    const child = spawn('psql', ['-X', '-q', guard.url], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PGAPPNAME: application },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.stdin.on('error', () => undefined);
    child.stdin.write(script);
    return child;
  };

  it('psql killed in the middle of COPY FROM STDIN inside a transaction: rolled back, no session, no lock', async () => {
    const app = 'i38o-copy-tx';
    const psql = psqlFromPipe(app, 'BEGIN;\nCOPY t FROM STDIN;\n7\tc7\n8\tc8\n');
    expect(await upstreamIn(app, "state = 'active' AND query LIKE 'COPY t FROM STDIN%'")).toBe(true);
    psql.kill('SIGKILL');
    expect(await sessionsOf(db.url, app)).toBe(0);
    expect(await locksOf(db.url, app)).toBe(0);
    expect(await table()).toBe('1=v1,2=v2,3=v3');
    await stillServes();
  });

  it('psql killed in the middle of COPY FROM STDIN outside a transaction: no ticket, nothing written, no session', async () => {
    const app = 'i38o-copy-alone';
    const before = tickets();
    const psql = psqlFromPipe(app, 'COPY t FROM STDIN;\n7\tc7\n8\tc8\n');
    // The guard keeps this COPY's data itself (nothing upstream to poll): its session exists, idle, and psql has
    // had its CopyInResponse once the data lines are on their way; a short pause lets them arrive.
    expect(await upstreamIn(app, "state = 'idle'")).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    psql.kill('SIGKILL');
    expect(await sessionsOf(db.url, app)).toBe(0);
    expect(tickets()).toBe(before);
    expect(await table()).toBe('1=v1,2=v2,3=v3');
    await stillServes();
  });

  it('a client gone in the middle of a pipeline (writes in a transaction, no Sync): rolled back, no session, no lock', async () => {
    const app = 'i38o-pipeline-tx';
    const client = await connect(guard.url, app);
    await client.query('BEGIN');
    const stream = streamOf(client);
    const insert = (id: number) => [
      serialize.parse({ text: 'INSERT INTO t (id, v) VALUES ($1, $2)' }),
      serialize.bind({ values: [String(id), `p${id}`] }),
      serialize.execute({}),
    ];
    const parse = serialize.parse({ text: 'SELECT count(*) FROM t' });
    // Two measured INSERTs, then half a Parse: the client is gone before it finishes the message or syncs.
    stream.write(Buffer.concat([...insert(7), ...insert(8), parse.subarray(0, parse.length - 5)]));
    expect(await upstreamIn(app, "state LIKE 'idle in transaction%' OR state = 'active'")).toBe(true);
    stream.destroy();
    expect(await sessionsOf(db.url, app)).toBe(0);
    expect(await locksOf(db.url, app)).toBe(0);
    expect(await table()).toBe('1=v1,2=v2,3=v3');
    await stillServes();
  });

  it('a client gone in the middle of a pipeline outside a transaction (a held write, a read, no Sync): nothing written, no session', async () => {
    const app = 'i38o-pipeline';
    const client = await connect(guard.url, app);
    const stream = streamOf(client);
    stream.write(
      Buffer.concat([
        serialize.parse({ text: "UPDATE t SET v = 'piped' WHERE id = 1" }),
        serialize.bind({}),
        serialize.execute({}),
        serialize.parse({ text: 'SELECT pg_sleep(0.2)' }),
        serialize.bind({}),
        serialize.execute({}),
      ]),
    );
    await new Promise((r) => setTimeout(r, 300));
    stream.destroy();
    expect(await sessionsOf(db.url, app)).toBe(0);
    expect(await table()).toBe('1=v1,2=v2,3=v3');
    await stillServes();
  });

  it('a client that stops reading a big result: the upstream waits on the guard, whose memory stays bounded', async () => {
    const app = 'i38o-slow-reader';
    const pid = guard.child.pid!;
    const baseline = rssMib(pid);
    const client = await connect(guard.url, app);
    const stream = streamOf(client);
    // About 650 MB of rows (3 million of ~220 bytes) that the client never reads.
    void client.query("SELECT g, repeat('x', 200) FROM generate_series(1, 3000000) g").catch(() => undefined);
    stream.pause();
    // PostgreSQL blocks writing to the guard (ClientWrite) once the guard stops reading it: backpressure.
    expect(await upstreamIn(app, "wait_event = 'ClientWrite'")).toBe(true);
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      samples.push(rssMib(pid));
      await new Promise((r) => setTimeout(r, 200));
    }
    // Still blocked: the result was not taken into the guard's memory meanwhile.
    expect(await upstreamIn(app, "wait_event = 'ClientWrite'")).toBe(true);
    const peak = Math.max(...samples);
    console.log(
      `guard RSS: ${baseline.toFixed(1)} MiB before, peak ${peak.toFixed(1)} MiB with a stalled 650 MB result`,
    );
    expect(peak).toBeLessThan(baseline + 200);
    stream.destroy();
    expect(await sessionsOf(db.url, app)).toBe(0);
    await stillServes();
  });
});

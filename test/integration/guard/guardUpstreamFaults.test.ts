/**
 * `pg-agent guard` (dist/cli.js) in front of a PostgreSQL cluster of the test's own (initdb + pg_ctl on a
 * free port, test/support/plainCluster.ts), so the test can restart the upstream and open more sessions
 * than the machine's shared server allows: the upstream going away under connected clients, the upstream
 * down when a client connects, and 100 clients at once. The guard stays up through all of it, nothing is
 * committed unapproved, and no upstream session of a client outlives it (pg_stat_activity, polled).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { sessionsOf as sessionsOfApp, startGuardProcess, tableOfRows } from '../../support/guardProcess';
import type { PlainCluster } from '../../support/plainCluster';
import { clusterToolsAvailable, startPlainCluster } from '../../support/plainCluster';
import { queryValue } from '../../support/scratchDatabase';
import { connect, failure } from '../../support/pgClients';

const tools = clusterToolsAvailable();
if (!tools.available) {
  if (process.env.CI === 'true')
    throw new Error(`CI=true and the guard's upstream fault tests cannot start a cluster: ${tools.reason}`);
  console.warn(`\n!!!!! SKIPPING the guard's upstream fault tests: ${tools.reason}\n`);
}

/** The guard's resident memory (MB), from /proc. */
const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

describe.skipIf(!tools.available)('pg-agent guard when its upstream fails, and under 100 clients', () => {
  let cluster: PlainCluster;
  let guard: GuardProcess;

  const sessionsOf = (application: string, gone = true) => sessionsOfApp(cluster.url, application, gone);
  const reads = async (application: string): Promise<void> => {
    const client = await connect(guard.url, application);
    try {
      expect((await client.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 3 }]);
    } finally {
      await client.end();
    }
  };
  const guardUp = () => expect(guard.child.exitCode).toBeNull();

  beforeAll(async () => {
    cluster = await startPlainCluster({ maxConnections: 140 });
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query(tableOfRows(3));
    await admin.end();
    guard = await startGuardProcess(cluster.url);
  }, 120_000);

  afterAll(async () => {
    if (process.env.GUARD_DEBUG) console.log(guard?.stderr());
    await guard?.stop();
    cluster?.destroy();
  });

  it("ends the connections of its clients with the upstream's own error when the upstream restarts, and serves new ones after", async () => {
    const idle = await connect(guard.url, 'guard-upstream-idle');
    const busy = await connect(guard.url, 'guard-upstream-busy');
    const idleEnded = new Promise<Error>((resolve) => idle.once('error', resolve));
    const sleeping = failure(busy.query('SELECT pg_sleep(30)'));
    for (
      let i = 0;
      i < 200 &&
      Number(
        await queryValue(
          cluster.url,
          "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(30)'",
        ),
      ) === 0;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    cluster.stop('fast');
    expect((await sleeping)?.code).toBe('57P01');
    expect(((await idleEnded) as pg.DatabaseError).code).toBe('57P01');
    // Their connections ended: a query on either fails at once, without a server.
    expect(await failure(idle.query('SELECT 1'))).toBeDefined();
    expect(await failure(busy.query('SELECT 1'))).toBeDefined();
    guardUp();
    cluster.start();
    await reads('guard-upstream-after');
    guardUp();
  });

  it('turns a client away with 08006 while the upstream is down, and lets it in once it is back', async () => {
    cluster.stop('fast');
    try {
      const refused = await failure(connect(guard.url, 'guard-upstream-down'));
      expect(refused?.code).toBe('08006');
      expect(refused?.message).toContain('cannot reach its database');
      guardUp();
    } finally {
      cluster.start();
    }
    await reads('guard-upstream-back');
    // A write after the restart is judged (the guard's own pool reconnected) and held, not run.
    const client = await connect(guard.url, 'guard-upstream-back');
    try {
      expect((await failure(client.query("UPDATE t SET v = 'after' WHERE id = 1")))?.code).toBe('PA001');
    } finally {
      await client.end();
    }
    expect(await queryValue(cluster.url, 'SELECT v FROM t WHERE id = 1')).toBe('v1');
  });

  it('answers 100 clients at once (connect, read, a held write, leave), on one ticket, leaving no session', async () => {
    const before = rssMb(guard.child.pid!);
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const client = await connect(guard.url, 'guard-upstream-many');
        try {
          const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
          const held = await failure(client.query("DELETE FROM t WHERE v = 'many'"));
          return { n: rows[0]?.n, code: held?.code, ticket: /ticket (tkt_[a-z0-9]+)/.exec(held?.message ?? '')?.[1] };
        } finally {
          await client.end();
        }
      }),
    );
    const after = rssMb(guard.child.pid!);
    console.log(
      `guard fault: 100 clients answered in ${Date.now() - started} ms; guard RSS ${before.toFixed(0)} MB before, ${after.toFixed(0)} MB after`,
    );
    expect(outcomes.every((o) => o.n === 3 && o.code === 'PA001')).toBe(true);
    // One statement, one ticket: concurrent identical writes find the same ticket.
    expect(new Set(outcomes.map((o) => o.ticket)).size).toBe(1);
    const tickets = readdirSync(join(guard.workspace, '.pgagent', 'approvals')).filter((f) => f.endsWith('.json'));
    const same = tickets.filter((f) =>
      readFileSync(join(guard.workspace, '.pgagent', 'approvals', f), 'utf8').includes("v = 'many'"),
    );
    expect(same).toHaveLength(1);
    expect(after).toBeLessThan(1024);
    expect(await sessionsOf('guard-upstream-many')).toBe(0);
    expect(Number(await queryValue(cluster.url, 'SELECT count(*) FROM t'))).toBe(3);
    guardUp();
    await reads('guard-upstream-last');
  }, 120_000);

  it('holds 20 identical transactions committed at once on one ticket, committing none', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const client = await connect(guard.url, 'guard-upstream-tx');
        try {
          await client.query('BEGIN');
          await client.query("INSERT INTO t (id, v) SELECT max(id) + 1, 'tx' FROM t");
          const held = await failure(client.query('COMMIT'));
          return { code: held?.code, ticket: /ticket (tkt_[a-z0-9]+)/.exec(held?.message ?? '')?.[1] };
        } finally {
          await client.end();
        }
      }),
    );
    expect(outcomes.every((o) => o.code === 'PA001')).toBe(true);
    expect(new Set(outcomes.map((o) => o.ticket)).size).toBe(1);
    expect(await sessionsOf('guard-upstream-tx')).toBe(0);
    expect(Number(await queryValue(cluster.url, 'SELECT count(*) FROM t'))).toBe(3);
  });
});

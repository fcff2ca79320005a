/**
 * The id recorded on a ticket when an approved write starts (core/sql/durableXid.ts), against a server that
 * crashes before the write commits (kill -9 of the executing backend: the postmaster restarts every session
 * and replays the WAL), on a cluster of the test's own. Without durability the crashed transaction's id is
 * handed to the next transaction after the restart, and pg_xact_status() then reports THAT transaction's
 * commit: the resolver would mark the ticket EXECUTED for a write that never happened. With it, the id is never
 * given out again and its fate reads "aborted".
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../../src/core/db/db';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { durableXid } from '../../../../src/core/sql/durableXid';
import { xactStatus } from '../../../../src/core/sql/executionResolver';
import type { PlainCluster } from '../../../support/plainCluster';
import { clusterToolsAvailable, startPlainCluster } from '../../../support/plainCluster';
import { connect } from '../../../support/pgClients';

const tools = clusterToolsAvailable();
if (!tools.available) {
  if (process.env.CI === 'true') throw new Error(`CI=true and the crash tests cannot start a cluster: ${tools.reason}`);
  console.warn(`\n!!!!! SKIPPING the durable transaction id tests: ${tools.reason}\n`);
}

/** Waits until the restarted server takes connections again (recovery done). */
async function reconnect(url: string): Promise<pg.Client> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await connect(url);
    } catch (error) {
      if (attempt > 300) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Opens a transaction, takes its id with `take`, kills its backend with SIGKILL before anything commits, then
 * commits one transaction on a new session after the restart and returns both ids.
 */
async function crashAfter(
  url: string,
  take: (client: pg.Client) => Promise<string>,
): Promise<{ crashed: string; next: string }> {
  const client = await connect(url);
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  await client.query('BEGIN');
  const crashed = await take(client);
  process.kill(pid, 'SIGKILL');
  await client.end().catch(() => undefined);
  const after = await reconnect(url);
  try {
    await after.query('BEGIN');
    const next = (await after.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0]!.xid;
    await after.query('COMMIT');
    return { crashed, next };
  } finally {
    await after.end();
  }
}

describe.skipIf(!tools.available)('the id of an executing write survives a crash restart', () => {
  let cluster: PlainCluster;
  let db: Db;

  beforeAll(async () => {
    cluster = await startPlainCluster();
    db = await openPostgres(parseConnectionUrl(cluster.url), { logger: silentLogger });
  });
  afterAll(async () => {
    await db?.close().catch(() => undefined);
    cluster?.destroy();
  });

  it('without durability the id is given to the next transaction, whose commit it then reports (the hazard)', async () => {
    const { crashed, next } = await crashAfter(cluster.url, async (client) => {
      return (await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0]!.xid;
    });
    expect(BigInt(next)).toBeLessThanOrEqual(BigInt(crashed));
    if (next === crashed) expect(await xactStatus(db, crashed)).toBe('committed');
  });

  it('made durable, the id is never given out again and reads aborted', async () => {
    let durable = false;
    const { crashed, next } = await crashAfter(cluster.url, async (client) => {
      const taken = await durableXid(
        async (sql) => (await client.query<{ xid: string; lsn: string }>(sql)).rows[0],
        db,
      );
      durable = taken.durable;
      return taken.xid;
    });
    expect(durable).toBe(true);
    expect(BigInt(next)).toBeGreaterThan(BigInt(crashed));
    expect(await xactStatus(db, crashed)).toBe('aborted');
  });

  it('an id beyond the server next one reads aborted, not an error', async () => {
    const client = await connect(cluster.url);
    const now = (await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0]!.xid;
    await client.end();
    expect(await xactStatus(db, String(BigInt(now) + 1000n))).toBe('aborted');
  });
});

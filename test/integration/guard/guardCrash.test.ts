/**
 * `pg-agent guard` (dist/cli.js) in front of a PostgreSQL cluster of the test's own (plainCluster.ts), which
 * the test crashes: kill -9 of the backend of a guard client's upstream session (PostgreSQL then restarts
 * every backend), kill -9 of the backend running an approved ticket (claimed, EXECUTING, waiting on a row
 * lock), and kill -9 of the guard itself while an approved run waits and while a `--hold wait` psql waits.
 * The client gets an error at once, the guard stays up and serves new clients once the server is back, a
 * claimed ticket ends FAILED (its transaction aborted: pg_xact_status, as every path resolves it) and never
 * runs again, held tickets survive the guard, and nothing is half-written.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { sessionsOf, startGuardProcess, tableOfRows } from '../../support/guardProcess';
import type { PlainCluster } from '../../support/plainCluster';
import { clusterToolsAvailable, startPlainCluster } from '../../support/plainCluster';
import { psqlRun, ticketIn } from '../../support/psqlRun';
import { queryValue } from '../../support/scratchDatabase';
import { connect, failure } from '../../support/pgClients';

const tools = clusterToolsAvailable();
if (!tools.available) {
  if (process.env.CI === 'true')
    throw new Error(`CI=true and the guard's crash tests cannot start a cluster: ${tools.reason}`);
  console.warn(`\n!!!!! SKIPPING the guard's crash tests: ${tools.reason}\n`);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface TicketFile {
  status: string;
  execution?: { xid?: string };
}

describe.skipIf(!tools.available)('pg-agent guard when PostgreSQL or the guard crashes', () => {
  let cluster: PlainCluster;
  let url: string;
  let guard: GuardProcess;

  const value = async (id: number) => String(await queryValue(url, `SELECT v FROM t WHERE id = ${id}`));
  const ticketOf = (g: GuardProcess, id: string): TicketFile =>
    JSON.parse(readFileSync(join(g.workspace, '.pgagent', 'approvals', `${id}.json`), 'utf8')) as TicketFile;
  /** The pid of a backend on the scratch database matching `where`, polled (bounded). */
  const backend = async (where: string): Promise<number | undefined> => {
    for (let i = 0; i < 400; i++) {
      const pid = await queryValue(
        url,
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND ${where} LIMIT 1`,
      ).catch(() => null);
      if (pid !== null && pid !== undefined) return Number(pid);
      await pause(25);
    }
    return undefined;
  };
  /** Bounded wait until the server takes connections again after its crash restart. */
  const serverBack = async (): Promise<void> => {
    for (let i = 0; i < 240; i++) {
      if (
        await queryValue(url, 'SELECT 1').then(
          () => true,
          () => false,
        )
      )
        return;
      await pause(250);
    }
    throw new Error('the cluster did not come back after its crash restart');
  };
  /** A new client of the guard reads, and its write is judged and held (the guard's own pool reconnected). */
  const servesAgain = async (g: GuardProcess, application: string): Promise<void> => {
    expect(g.child.exitCode).toBeNull();
    let client: pg.Client | undefined;
    for (let i = 0; i < 40 && !client; i++) client = await connect(g.url, application).catch(() => undefined);
    if (!client) throw new Error('no client got through the guard after the crash');
    try {
      expect((await client.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 3 }]);
      expect((await failure(client.query("UPDATE t SET v = 'later' WHERE id = 3")))?.code).toBe('PA001');
    } finally {
      await client.end();
    }
  };
  /** The ticket a `--hold wait` client of `g` waits on, from its status file (polled, bounded). */
  const waitingTicket = async (g: GuardProcess): Promise<string> => {
    const file = join(g.workspace, '.pgagent', 'guard', `status-${g.child.pid}.json`);
    for (let i = 0; i < 200; i++) {
      // Written a moment after the guard starts and after each change (atomically).
      const status = existsSync(file)
        ? (JSON.parse(readFileSync(file, 'utf8')) as { clients: { waiting?: { ticket: string } }[] })
        : { clients: [] };
      const ticket = status.clients.find((c) => c.waiting)?.waiting?.ticket;
      if (ticket) return ticket;
      await pause(100);
    }
    return '';
  };
  /** A write held, approved, and its retry through `g` left waiting on a row lock another session holds. */
  const claimedRun = async (g: GuardProcess, application: string, sql: string) => {
    const client = await connect(g.url, application);
    const held = await failure(client.query(sql));
    expect(held?.code).toBe('PA001');
    const ticket = ticketIn(held?.message ?? '');
    expect((await g.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    const locker = await connect(url, 'i38o-locker');
    await locker.query('BEGIN');
    await locker.query('SELECT * FROM t WHERE id = 1 FOR UPDATE');
    const retry = failure(client.query(sql));
    const executor = await backend("wait_event_type = 'Lock'");
    expect(executor).toBeDefined();
    expect(ticketOf(g, ticket).status).toBe('EXECUTING');
    const xid = ticketOf(g, ticket).execution?.xid;
    expect(xid).toMatch(/^\d+$/);
    return { client, ticket, xid: xid!, retry, executor: executor!, locker };
  };

  beforeAll(async () => {
    cluster = await startPlainCluster({ maxConnections: 40 });
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE i38o_crash');
    await admin.end();
    url = cluster.url.replace(/\/postgres$/, '/i38o_crash');
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(tableOfRows(3));
    await db.end();
    guard = await startGuardProcess(url);
  }, 120_000);

  afterAll(async () => {
    if (process.env.GUARD_DEBUG) console.log(guard?.stderr());
    await guard?.stop();
    cluster?.destroy();
  });

  it("kill -9 of a client's upstream backend: the client gets an error at once, the guard serves new clients once the server is back", async () => {
    const victim = await connect(guard.url, 'i38o-crash-victim');
    const bystander = await connect(guard.url, 'i38o-crash-bystander');
    const bystanderEnded = new Promise<Error>((resolve) => bystander.once('error', resolve));
    const sleeping = failure(victim.query('SELECT pg_sleep(60)'));
    const pid = await backend("application_name = 'i38o-crash-victim' AND state = 'active'");
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    const error = await sleeping;
    expect(error).toBeDefined();
    console.log(`client of the killed backend got: ${error?.code ?? ''} ${error?.message ?? ''}`);
    // Every other session ends too (PostgreSQL's crash restart), each with the server's own word for it.
    const ended = (await bystanderEnded) as pg.DatabaseError;
    console.log(`a bystander got: ${ended.code ?? ''} ${ended.message}`);
    expect(await failure(victim.query('SELECT 1'))).toBeDefined();
    expect(guard.child.exitCode).toBeNull();
    await serverBack();
    await servesAgain(guard, 'i38o-crash-after');
    expect(await sessionsOf(url, 'i38o-crash-victim')).toBe(0);
    expect(await value(1)).toBe('v1');
  });

  it('kill -9 of the backend running an approved ticket (claimed, waiting on a lock): FAILED, aborted, never run again', async () => {
    const sql = "UPDATE t SET v = 'crashed' WHERE id = 1";
    const run = await claimedRun(guard, 'i38o-crash-claimed', sql);
    process.kill(run.executor, 'SIGKILL');
    const answer = await run.retry;
    console.log(`the retry's client got: ${answer?.code ?? ''} ${answer?.message ?? ''}`);
    expect(answer).toBeDefined();
    await serverBack();
    // The executor saw its session die before COMMIT and marked the ticket FAILED itself. Its transaction id had
    // written nothing to the WAL when the server crashed, so after recovery PostgreSQL may not know it at all
    // ("transaction ID … is in the future"): it never committed either way.
    const fate = await queryValue(url, `SELECT pg_xact_status('${run.xid}'::xid8)`).catch((e: Error) => e.message);
    console.log(`pg_xact_status of the claimed transaction after the crash: ${String(fate)}`);
    expect(String(fate)).toMatch(/^aborted$|is in the future/);
    expect((await guard.pgAgent(['approvals', 'show', run.ticket])).code).toBe(0);
    expect(ticketOf(guard, run.ticket).status).toBe('FAILED');
    expect(await value(1)).toBe('v1');
    // The spent approval never runs again: the identical statement is a new ticket.
    const again = await connect(guard.url, 'i38o-crash-claimed-again');
    try {
      const held = await failure(again.query(sql));
      expect(held?.code).toBe('PA001');
      expect(ticketIn(held?.message ?? '')).not.toBe(run.ticket);
    } finally {
      await again.end();
    }
    expect(await value(1)).toBe('v1');
  });

  it('kill -9 of the guard while an approved run waits: the ticket is resolved from pg_xact_status, nothing ran', async () => {
    const doomed = await startGuardProcess(url, { user: 'dora' });
    const sql = "UPDATE t SET v = 'orphan' WHERE id = 1";
    const run = await claimedRun(doomed, 'i38o-crash-guard-claimed', sql);
    await doomed.kill();
    expect((await run.retry)?.message).toMatch(/terminat|ECONNRESET/i);
    // The executor's transaction cannot commit without its guard: once the lock is free it ends, aborted.
    await run.locker.query('ROLLBACK');
    await run.locker.end();
    let status = 'EXECUTING';
    for (let i = 0; i < 100 && status === 'EXECUTING'; i++) {
      await doomed.pgAgent(['approvals', 'show', run.ticket]);
      status = ticketOf(doomed, run.ticket).status;
      if (status === 'EXECUTING') await pause(200);
    }
    expect(status).toBe('FAILED');
    expect(await queryValue(url, `SELECT pg_xact_status('${run.xid}'::xid8)`)).toBe('aborted');
    expect(await value(1)).toBe('v1');
  });

  it('kill -9 of a guard with a --hold wait psql waiting: psql gets a clean error, the ticket survives for the next guard', async () => {
    const doomed = await startGuardProcess(url, { user: 'wanda', args: ['--hold', 'wait=600'] });
    const sql = "UPDATE t SET v = 'waited' WHERE id = 2";
    const waiting = psqlRun(doomed.url, [sql], 'i38o-crash-wait');
    const ticket = await waitingTicket(doomed);
    expect(ticket).toMatch(/^tkt_/);
    await doomed.kill();
    const psql = await waiting;
    expect(psql.code).toBe(2);
    expect(psql.stderr).toContain('server closed the connection unexpectedly');
    expect(await sessionsOf(url, 'i38o-crash-wait')).toBe(0);
    expect(ticketOf(doomed, ticket).status).toBe('PENDING_APPROVAL');
    // The client reconnects to the next guard on the workspace: the same statement finds the same ticket.
    const next = await startGuardProcess(url, { user: 'walt', workspace: doomed.workspace });
    try {
      const retry = await psqlRun(next.url, [sql], 'i38o-crash-wait');
      expect(retry.stderr).toContain('PA001');
      expect(ticketIn(retry.stderr)).toBe(ticket);
      expect(await value(2)).toBe('v2');
    } finally {
      await next.stop();
    }
  });

  it('a guard stopped (SIGINT/SIGTERM) with a --hold wait psql waiting: psql gets FATAL 57P01 saying why, the ticket stays', async () => {
    const stopping = await startGuardProcess(url, { user: 'stella', args: ['--hold', 'wait=600'] });
    const sql = "UPDATE t SET v = 'stopped' WHERE id = 3";
    const waiting = psqlRun(stopping.url, [sql], 'i38o-stop-wait');
    const ticket = await waitingTicket(stopping);
    expect(ticket).toMatch(/^tkt_/);
    await stopping.stop();
    const psql = await waiting;
    expect(psql.code).toBe(2);
    expect(psql.stderr).toContain('FATAL:  57P01: terminating connection because the guard is shutting down');
    expect(await sessionsOf(url, 'i38o-stop-wait')).toBe(0);
    expect(ticketOf(stopping, ticket).status).toBe('PENDING_APPROVAL');
    expect(await value(3)).toBe('v3');
  });
});

/**
 * `pg-agent guard` (dist/cli.js, its own process) with real clients: an approved statement's RETURNING rows
 * reach the client (psql; node-postgres simple and parameterised, whose Describe of the held portal gets the
 * statement's RowDescription), and `--hold wait`: psql's DELETE waits for the decision made by another
 * process (`pg-agent approvals approve|reject`), with no upstream transaction or lock while it waits; a
 * CancelRequest (SIGINT to psql, node-postgres' cancel key) ends the wait with 57014 and the ticket stays
 * pending; a client gone while waiting leaves nothing running for it. Every assertion reads the database.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { runPsql, ticketIn } from '../../support/psqlRun';
import { connect } from '../../support/pgClients';
import type { PsqlRun } from '../../support/psqlRun';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** psql as a person runs it (command tags shown), optionally with Ctrl-C once `interruptWhen` holds. */
const psql = (url: string, commands: string[], app: string, interruptWhen?: () => Promise<boolean>): Promise<PsqlRun> =>
  runPsql(['-A', '-t', '-v', 'VERBOSITY=verbose', url, ...commands.flatMap((c) => ['-c', c])], {
    application: app,
    ...(interruptWhen ? { interruptWhen } : {}),
  });

type Status = { clients: { application: string; waiting?: { ticket: string; since: string } }[] };

/** The ticket the guard shows `application` waiting on (its status file), polled (bounded) until there is one. */
async function waitingTicket(guard: GuardProcess, application: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    try {
      const status = JSON.parse(
        readFileSync(join(guard.workspace, '.pgagent', 'guard', `status-${guard.child.pid}.json`), 'utf8'),
      ) as Status;
      const ticket = status.clients.find((c) => c.application === application)?.waiting?.ticket;
      if (ticket) return ticket;
    } catch {
      // being rewritten
    }
    await sleep(50);
  }
  throw new Error(`${application} never waited`);
}

function ticketStatus(guard: GuardProcess, ticket: string): string {
  return (
    JSON.parse(readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8')) as {
      status: string;
    }
  ).status;
}

/** What the database shows of the client's upstream session: sessions, and locks they hold. */
async function upstreamOf(
  dbUrl: string,
  application: string,
): Promise<{ sessions: number; inTransaction: number; locks: number }> {
  const n = async (sql: string) => Number(await queryValue(dbUrl, sql));
  return {
    sessions: await n(
      `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '${application}'`,
    ),
    inTransaction: await n(
      `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = '${application}' AND (state <> 'idle' OR backend_xid IS NOT NULL OR xact_start IS NOT NULL)`,
    ),
    locks: await n(
      `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.datname = current_database() AND a.application_name = '${application}' AND l.locktype = 'relation'`,
    ),
  };
}

async function goneFrom(dbUrl: string, application: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const { sessions } = await upstreamOf(dbUrl, application);
    if (sessions === 0) return 0;
    await sleep(100);
  }
  return (await upstreamOf(dbUrl, application)).sessions;
}

describe.skipIf(!postgresAvailable)('pg-agent guard: RETURNING rows of approved statements, and --hold wait', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let waiting: GuardProcess;

  beforeAll(async () => {
    db = await createScratchDatabase('pgagent_guard_wait');
    await execSql(
      db.url,
      "CREATE TABLE t (id serial PRIMARY KEY, v text, at timestamptz DEFAULT now()); INSERT INTO t (v) SELECT 'v' || g FROM generate_series(1, 5) g; CREATE TABLE w (id int PRIMARY KEY); INSERT INTO w SELECT generate_series(1, 20);",
    );
    [guard, waiting] = await Promise.all([
      startGuardProcess(db.url),
      startGuardProcess(db.url, { user: 'bob', args: ['--hold', 'wait=120'] }),
    ]);
  }, 60_000);

  afterAll(async () => {
    if (process.env.GUARD_DEBUG) console.log(guard?.stderr(), waiting?.stderr());
    await Promise.all([guard?.stop(), waiting?.stop()]);
    await db?.drop();
  });

  const count = async (table = 't') => Number(await queryValue(db.url, `SELECT count(*) FROM ${table}`));

  it('gives psql the RETURNING rows of an approved INSERT, run once', async () => {
    const sql = "INSERT INTO t (v) VALUES ('p1'), ('p2') RETURNING id, v";
    const held = await psql(guard.url, [sql], 'guard-wait-psql-ret');
    const ticket = ticketIn(held.stderr);
    expect(held.stderr).toContain('PA001');
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    const ran = await psql(guard.url, [sql], 'guard-wait-psql-ret');
    expect(ran.stderr).toBe('');
    const inTable = await psql(db.url, ["SELECT id, v FROM t WHERE v IN ('p1', 'p2') ORDER BY id"], 'direct');
    expect(ran.stdout).toBe(`${inTable.stdout}INSERT 0 2\n`);
    expect(await count()).toBe(7);
  });

  it('gives node-postgres the rows, simple and with parameters (Describe of the held portal answered)', async () => {
    const client = await connect(guard.url, 'guard-wait-pg-ret');
    try {
      const simple = "UPDATE t SET v = v || '!' WHERE id <= 2 RETURNING id, v";
      const heldSimple = (await client.query(simple).catch((error: pg.DatabaseError) => error)) as pg.DatabaseError;
      expect((await guard.pgAgent(['approvals', 'approve', ticketIn(heldSimple.message)])).code).toBe(0);
      const updated = await client.query<{ id: number; v: string }>(simple);
      expect(updated.rowCount).toBe(2);
      expect(updated.rows).toEqual([
        { id: 1, v: 'v1!' },
        { id: 2, v: 'v2!' },
      ]);
      expect(await queryValue(db.url, "SELECT count(*) FROM t WHERE v LIKE '%!'")).toBe('2');

      const insert = 'INSERT INTO t (v) VALUES ($1) RETURNING id, v, at';
      const held = (await client
        .query(insert, ['param'])
        .catch((error: pg.DatabaseError) => error)) as pg.DatabaseError;
      expect(held.code).toBe('PA001');
      const ticket = ticketIn(held.message);
      expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
      const inserted = await client.query<{ id: number; v: string; at: Date }>(insert, ['param']);
      expect(inserted.rowCount).toBe(1);
      // Its undo script has the row: the client's own upstream session (its Parse) held no lock on t meanwhile.
      const undo = readFileSync(join(guard.workspace, '.pgagent', 'undo', `${ticket}.sql`), 'utf8');
      expect(undo).not.toContain('No undo for');
      expect(undo).toContain('puts back 1 row(s)');
      const row = inserted.rows[0]!;
      // Types as the RowDescription said (int4 → number, timestamptz → Date), values as in the table.
      expect(typeof row.id).toBe('number');
      expect(row.at).toBeInstanceOf(Date);
      const direct = await connect(db.url, 'guard-wait-direct');
      const stored = (
        await direct.query<{ id: number; v: string; at: Date }>("SELECT id, v, at FROM t WHERE v = 'param'")
      ).rows;
      await direct.end();
      expect(stored).toEqual([row]);
    } finally {
      await client.end();
    }
  });

  it('gives a client that asked for binary results (node-postgres binary: true) text rows its Describe announced', async () => {
    const client = new pg.Client({
      connectionString: guard.url,
      application_name: 'guard-wait-binary',
      binary: true,
    } as pg.ClientConfig); // binary: pg's own option, not in its types
    client.on('error', () => undefined);
    await client.connect();
    try {
      const insert = 'INSERT INTO t (v) VALUES ($1) RETURNING id, v';
      const held = (await client.query(insert, ['bin']).catch((error: pg.DatabaseError) => error)) as pg.DatabaseError;
      expect((await guard.pgAgent(['approvals', 'approve', ticketIn(held.message)])).code).toBe(0);
      const inserted = await client.query<{ id: number; v: string }>(insert, ['bin']);
      expect(inserted.rows).toEqual([
        { id: Number(await queryValue(db.url, "SELECT id FROM t WHERE v = 'bin'")), v: 'bin' },
      ]);
    } finally {
      await client.end();
    }
  });

  it('refuses a held portal whose client asks for binary rows without describing it, before anything runs', async () => {
    const client = await connect(guard.url, 'guard-wait-blind');
    try {
      // Parse, Bind (result format 1), Execute, Sync: no Describe, as a driver that trusts its own formats sends.
      // node-postgres forgets the query at its error (its ReadyForQuery then only frees the connection).
      const error = await new Promise<pg.DatabaseError | undefined>((resolve) => {
        const blind = {
          submit: (connection: {
            parse(q: object): void;
            bind(c: object): void;
            execute(c: object): void;
            sync(): void;
          }) => {
            connection.parse({ text: 'INSERT INTO t (v) VALUES ($1) RETURNING id' });
            connection.bind({ values: ['blind'], binary: true });
            connection.execute({ rows: 0 });
            connection.sync();
          },
          handleError: (e: pg.DatabaseError) => resolve(e),
          handleReadyForQuery: () => resolve(undefined),
          handleDataRow: () => undefined,
          handleCommandComplete: () => undefined,
          handleRowDescription: () => undefined,
          handleEmptyQuery: () => undefined,
          handlePortalSuspended: () => undefined,
        };
        void client.query(blind as unknown as pg.QueryConfig);
      });
      expect(error?.code).toBe('PA002');
      expect(error?.message).toContain('text format only');
      expect(await queryValue(db.url, "SELECT count(*) FROM t WHERE v = 'blind'")).toBe('0');
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }
  });

  it('--hold wait: psql DELETE waits (no upstream transaction or lock), runs once when approved by another process', async () => {
    const app = 'guard-wait-psql-approve';
    const run = psql(waiting.url, ['DELETE FROM w WHERE id <= 2'], app);
    const ticket = await waitingTicket(waiting, app);
    expect(await upstreamOf(db.url, app)).toEqual({ sessions: 1, inTransaction: 0, locks: 0 });
    const status = await waiting.pgAgent(['guard', 'status']);
    expect(status.stdout).toContain(`waits (--hold wait) on ticket ${ticket} since`);
    expect(await count('w')).toBe(20);
    expect((await waiting.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    const done = await run;
    expect(done).toMatchObject({ code: 0, stderr: '', stdout: 'DELETE 2\n' });
    expect(await count('w')).toBe(18);
    expect(ticketStatus(waiting, ticket)).toBe('EXECUTED');
  });

  it('--hold wait: a rejected statement gets PA002', async () => {
    const app = 'guard-wait-psql-reject';
    const run = psql(waiting.url, ['DELETE FROM w WHERE id = 3'], app);
    const ticket = await waitingTicket(waiting, app);
    expect((await waiting.pgAgent(['approvals', 'reject', ticket, '--comment', 'not today'])).code).toBe(0);
    const done = await run;
    expect(done.stderr).toMatch(/ERROR: {2}PA002: Rejected: ticket tkt_\w+ for this statement was rejected/);
    expect(await count('w')).toBe(18);
  });

  // psql itself stops a script after Ctrl-C; the node-postgres test below goes on on the same connection.
  it('--hold wait: Ctrl-C in psql ends the wait with 57014, the ticket stays pending', async () => {
    const app = 'guard-wait-psql-cancel';
    let ticket = '';
    const run = await psql(waiting.url, ['DELETE FROM w WHERE id = 4'], app, async () => {
      ticket = await waitingTicket(waiting, app);
      return true;
    });
    expect(run.stderr).toContain('ERROR:  57014: canceling statement due to user request');
    expect(ticketStatus(waiting, ticket)).toBe('PENDING_APPROVAL');
    expect(await count('w')).toBe(18);
  });

  it('--hold wait: node-postgres cancel ends a parameterised wait; the connection stays usable; approved, the retry runs once', async () => {
    const client = await connect(waiting.url, 'guard-wait-pg-cancel');
    try {
      const pending = client
        .query('DELETE FROM w WHERE id = $1 RETURNING id', [5])
        .catch((error: pg.DatabaseError) => error);
      const ticket = await waitingTicket(waiting, 'guard-wait-pg-cancel');
      expect(await upstreamOf(db.url, 'guard-wait-pg-cancel')).toEqual({ sessions: 1, inTransaction: 0, locks: 0 });
      // What pg_cancel_backend-style cancellation sends: a CancelRequest with the client's key, on its own connection.
      const keys = client as unknown as { processID: number; secretKey: number };
      const socket = net.connect({ host: '127.0.0.1', port: waiting.port }, () =>
        socket.end(serialize.cancel(keys.processID, keys.secretKey)),
      );
      const canceled = (await pending) as pg.DatabaseError;
      expect(canceled.code).toBe('57014');
      expect(ticketStatus(waiting, ticket)).toBe('PENDING_APPROVAL');
      expect((await client.query('SELECT count(*)::int AS n FROM w')).rows).toEqual([{ n: 18 }]);

      expect((await waiting.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
      const ran = await client.query<{ id: number }>('DELETE FROM w WHERE id = $1 RETURNING id', [5]);
      expect(ran.rows).toEqual([{ id: 5 }]);
      expect(await count('w')).toBe(17);
    } finally {
      await client.end();
    }
  });

  it('--hold wait: a client gone while waiting leaves no upstream session, and nothing runs for it once approved', async () => {
    const app = 'guard-wait-pg-gone';
    const client = await connect(waiting.url, app);
    void client.query('DELETE FROM w WHERE id = $1', [6]).catch(() => undefined);
    const ticket = await waitingTicket(waiting, app);
    (client as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
    expect(await goneFrom(db.url, app)).toBe(0);
    expect((await waiting.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    // Another client's round trip through the same guard: anything the gone client's wait would do is done by now.
    const other = await connect(waiting.url, 'guard-wait-after');
    expect((await other.query('SELECT count(*)::int AS n FROM w')).rows).toEqual([{ n: 17 }]);
    await other.end();
    expect(ticketStatus(waiting, ticket)).toBe('APPROVED');
    expect(await count('w')).toBe(17);
  });

  it('--hold wait=N: answers PA001 "still waiting after N s" when nobody decides in time', async () => {
    const short = await startGuardProcess(db.url, { user: 'carol', args: ['--hold', 'wait=1'] });
    try {
      const run = await psql(short.url, ['DELETE FROM w WHERE id = 7'], 'guard-wait-short');
      expect(run.stderr).toMatch(
        /PA001: held for approval: ticket tkt_\w+ \(risk \w+, 1 row\(s\), still waiting after 1 s\); nothing ran/,
      );
      expect(await count('w')).toBe(17);
    } finally {
      await short.stop();
    }
  });
});

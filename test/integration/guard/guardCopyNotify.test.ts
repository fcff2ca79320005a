/**
 * COPY and LISTEN/NOTIFY through `pg-agent guard` (issue 24 item 1), with clients nobody here wrote: psql
 * (COPY … TO STDOUT, `\copy` both ways), node-postgres (LISTEN, notifications) and psycopg2 (copy_expert).
 * COPY … TO STDOUT is the read of what it names and returns what the database returns; its query is judged
 * like the query itself. COPY … FROM STDIN outside a transaction is held as the INSERT of its rows (read by
 * the server, never by us), the identical retry runs it once; inside BEGIN … COMMIT it is held with its data on
 * the transaction's ticket; approved, only the same data commits, once. LISTEN passes; a NOTIFY sent to the database reaches the idle guard client; NOTIFY through
 * the guard is held.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded, tableOfRows } from '../../support/guardProcess';
import { ticketIn } from '../../support/psqlRun';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { execSql, postgresAvailable } from '../../support/services';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PGAPPNAME: 'guard-copy-test' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const psql = (url: string, commands: string[]): Promise<Run> =>
  run('psql', ['-X', '-q', '-A', '-t', '-v', 'VERBOSITY=verbose', url, ...commands.flatMap((c) => ['-c', c])]);
const PYTHON = `
import io, sys, psycopg2
conn = psycopg2.connect(sys.argv[1], application_name='guard-copy-psycopg2')
cur = conn.cursor()
out = io.StringIO()
cur.copy_expert('COPY (SELECT id, v FROM t ORDER BY id) TO STDOUT WITH (FORMAT csv)', out)
print(out.getvalue(), end='')
# A write after a read in one transaction is refused (READ WRITE comes too late): a new transaction.
conn.commit()
try:
    cur.copy_expert('COPY t FROM STDIN', io.StringIO('30\\tthirty\\n'))
    conn.commit()
    print('committed')
except psycopg2.Error as e:
    print('error', e.pgcode)
    conn.rollback()
cur.execute('SELECT count(*) FROM t')
print('count', cur.fetchone()[0])
`;

describe.skipIf(!postgresAvailable)('pg-agent guard: COPY and LISTEN/NOTIFY', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let dir: string;

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_copy', [
      tableOfRows(5),
      `CREATE FUNCTION shout() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t; RETURN 1; END $$;`,
    ]));
    dir = mkdtempSync(join(tmpdir(), 'pgagent-guard-copy-'));
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  const ids = async (): Promise<string> =>
    String(await queryValue(db.url, "SELECT string_agg(id::text, ',' ORDER BY id) FROM t"));

  it('COPY … TO STDOUT returns what the database returns: psql COPY, a query as CSV, \\copy to a file', async () => {
    const commands = [
      'COPY t TO STDOUT',
      'COPY (SELECT id, v FROM t WHERE id < 3 ORDER BY id) TO STDOUT (FORMAT csv, HEADER)',
    ];
    const through = await psql(guard.url, commands);
    const direct = await psql(db.url, commands);
    expect(through.stderr).toBe('');
    expect(through.stdout).toBe(direct.stdout);
    expect(through.stdout).toContain('3\tv3\n');
    expect(through.stdout).toContain('id,v\n1,v1\n2,v2\n');

    const file = join(dir, 'out.tsv');
    const copied = await psql(guard.url, [`\\copy t to '${file}'`, 'SELECT count(*) FROM t']);
    expect(copied).toMatchObject({ code: 0, stderr: '', stdout: '5\n' });
    expect(readFileSync(file, 'utf8')).toBe('1\tv1\n2\tv2\n3\tv3\n4\tv4\n5\tv5\n');
  });

  it('judges COPY (query) TO STDOUT like its query: a writing function is held, nothing deleted', async () => {
    for (const sql of [
      'SELECT shout()',
      'COPY (SELECT shout()) TO STDOUT',
      'COPY (/* ( */ SELECT shout() AS ")") TO STDOUT',
    ]) {
      const held = await psql(guard.url, [sql]);
      expect(held.stderr).toContain('PA001');
      expect(held.stdout).toBe('');
    }
    expect(await ids()).toBe('1,2,3,4,5');
  });

  it('holds \\copy FROM a file outside a transaction as the INSERT of its rows, read by the server; approved, the same data runs once', async () => {
    const file = join(dir, 'in.tsv');
    const other = join(dir, 'in-other.tsv');
    writeFileSync(file, "10\tten\n11\tO'Neil \\\\ back\n12\t\\N\n13\tx'); DELETE FROM t; --\n");
    writeFileSync(other, '20\ttwenty\n');
    const load = (path: string) => psql(guard.url, [`\\copy t from '${path}'`, 'SELECT count(*) FROM t']);

    const held = await load(file);
    expect(held.stderr).toContain('PA001');
    expect(held.stderr).toContain('public.t: 4 inserted');
    // The session goes on after the held COPY.
    expect(held.stdout).toBe('5\n');
    const ticket = ticketIn(held.stderr);
    const shown = JSON.parse(
      readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8'),
    ) as { sql: string };
    expect(shown.sql).toBe(
      `INSERT INTO "t" ("id", "v") VALUES\n('10', 'ten'),\n('11', E'O''Neil \\\\ back'),\n('12', NULL),\n('13', 'x''); DELETE FROM t; --')`,
    );
    expect(await ids()).toBe('1,2,3,4,5');

    expect(ticketIn((await load(file)).stderr)).toBe(ticket);
    expect(ticketIn((await load(other)).stderr)).not.toBe(ticket);
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    const ran = await psql(guard.url, [
      `\\copy t from '${file}'`,
      'SELECT v FROM t WHERE id = 11',
      'SELECT v IS NULL FROM t WHERE id = 12',
    ]);
    expect(ran).toMatchObject({ code: 0, stderr: '', stdout: "O'Neil \\ back\nt\n" });
    expect(await ids()).toBe('1,2,3,4,5,10,11,12,13');
    expect(await psql(guard.url, [`\\copy t from '${file}'`])).toMatchObject({
      stderr: expect.stringContaining('PA001') as unknown,
    });
    await execSql(db.url, 'DELETE FROM t WHERE id >= 10');
  });

  it('refuses what it cannot read safely (PA002): too much data, binary, WHERE, a database with an event trigger; the session goes on', async () => {
    const big = join(dir, 'big.tsv');
    writeFileSync(big, Array.from({ length: 40_000 }, (_, i) => `${100 + i}\t${'x'.repeat(24)}`).join('\n'));
    const tooBig = await psql(guard.url, [`\\copy t from '${big}'`, 'SELECT count(*) FROM t']);
    expect(tooBig.stderr).toContain('PA002: COPY … FROM STDIN through the guard takes at most 1048576 bytes of data');
    expect(tooBig.stdout).toBe('5\n');
    // (psql -c 'COPY … FROM STDIN' waits on its own stdin after any error, even from the database itself.)
    const client = new pg.Client({ connectionString: guard.url });
    await client.connect();
    try {
      const refusals: [sql: string, why: string][] = [
        ['COPY t FROM STDIN (FORMAT binary)', "COPY option format 'binary' is not taken"],
        ['COPY t FROM STDIN WHERE id > 1', 'WHERE'],
      ];
      for (const [sql, why] of refusals) {
        const error = await client.query(sql).then(
          () => undefined,
          (e: pg.DatabaseError) => e,
        );
        expect(error).toMatchObject({ code: 'PA002', message: expect.stringContaining(why) as unknown });
      }
      // In the extended protocol the guard does not read COPY data itself: refused, never a ticket for a COPY it could not run.
      const extended = await client.query({ name: 'copy-stdin', text: 'COPY t FROM STDIN' }).then(
        () => undefined,
        (e: pg.DatabaseError) => e,
      );
      expect(extended).toMatchObject({
        code: 'PA002',
        message: expect.stringContaining('not in the extended protocol') as unknown,
      });
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }

    await execSql(
      db.url,
      `CREATE TABLE ddl_log (tag text);
       CREATE FUNCTION log_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ddl_log VALUES (tg_tag); END $$;
       CREATE EVENT TRIGGER log_ddl ON ddl_command_end EXECUTE FUNCTION log_ddl();`,
    );
    try {
      const file = join(dir, 'one.tsv');
      writeFileSync(file, '10\tten\n');
      const refused = await psql(guard.url, [`\\copy t from '${file}'`]);
      expect(refused.stderr).toContain('an event trigger exists');
    } finally {
      await execSql(db.url, 'DROP EVENT TRIGGER log_ddl');
    }
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM ddl_log'))).toBe(0);
    expect(await ids()).toBe('1,2,3,4,5');
  });

  it('inside BEGIN … COMMIT: held with its data on one ticket; approved, other data does not commit, the same data commits once', async () => {
    const file = join(dir, 'load.tsv');
    const other = join(dir, 'other.tsv');
    writeFileSync(file, '10\tten\n11\televen\n');
    writeFileSync(other, '20\ttwenty\n21\ttwenty-one\n');
    const transaction = (path: string) =>
      psql(guard.url, [
        'BEGIN',
        `\\copy t from '${path}'`,
        'SELECT count(*) FROM t',
        'COMMIT',
        'SELECT count(*) FROM t',
      ]);

    const held = await transaction(file);
    // Inside its transaction the client sees its rows; the COMMIT is held, rolled back.
    expect(held.stdout).toBe('7\n5\n');
    expect(held.stderr).toContain('PA001');
    expect(held.stderr).toContain('public.t: 2 inserted');
    const ticket = ticketIn(held.stderr);
    const shown = JSON.parse(
      readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${ticket}.json`), 'utf8'),
    ) as { sql: string };
    expect(shown.sql).toMatch(
      /-- The COPY below reads 17 bytes of data \(SHA-256 [0-9a-f]{64}\):\n-- {3}10\tten\n-- {3}11\televen\nCOPY {1,2}t FROM STDIN/,
    );
    expect(await ids()).toBe('1,2,3,4,5');
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);

    // The same statement with other rows (as many) is another transaction: held on a new ticket.
    const swapped = await transaction(other);
    expect(swapped.stderr).toContain('PA001');
    expect(ticketIn(swapped.stderr)).not.toBe(ticket);
    expect(await ids()).toBe('1,2,3,4,5');

    const committed = await transaction(file);
    expect(committed).toMatchObject({ code: 0, stderr: '', stdout: '7\n7\n' });
    expect(await ids()).toBe('1,2,3,4,5,10,11');
    // Spent: the same load again is held anew (and nothing commits).
    await execSql(db.url, 'DELETE FROM t WHERE id >= 10');
    const again = await transaction(file);
    expect(again.stderr).toContain('PA001');
    expect(await ids()).toBe('1,2,3,4,5');
  });

  it('node-postgres: COPY FROM STDIN in its transaction without a stream fails as the client itself ends it (CopyFail); the connection goes on', async () => {
    const client = new pg.Client({ connectionString: guard.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      const error = await client.query('COPY t FROM STDIN').then(
        () => undefined,
        (e: pg.DatabaseError) => e,
      );
      expect(error?.code).toBe('57014');
      expect(error?.message).toContain('No source stream defined');
      await client.query('ROLLBACK');
      expect((await client.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 5 }]);
    } finally {
      await client.end();
    }
    expect(await ids()).toBe('1,2,3,4,5');
  });

  it('psycopg2: copy_expert TO STDOUT reads; FROM STDIN in its transaction is held at commit, the connection usable after', async () => {
    const result = await run('/usr/bin/python3', ['-c', PYTHON, guard.url]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('1,v1\n2,v2\n3,v3\n4,v4\n5,v5\nerror PA001\ncount 5\n');
    expect(await ids()).toBe('1,2,3,4,5');
  });

  it('node-postgres: LISTEN passes, a NOTIFY sent to the database reaches the idle client, UNLISTEN stops it; NOTIFY through the guard is held', async () => {
    const listener = new pg.Client({ connectionString: guard.url, application_name: 'guard-listener' });
    const direct = new pg.Client({ connectionString: db.url });
    const watcher = new pg.Client({ connectionString: db.url });
    await Promise.all([listener.connect(), direct.connect(), watcher.connect()]);
    try {
      const received: pg.Notification[] = [];
      let notified: () => void = () => undefined;
      listener.on('notification', (n) => {
        received.push(n);
        notified();
      });
      await listener.query('LISTEN jobs');
      expect(
        Number(
          await queryValue(
            db.url,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'guard-listener'",
          ),
        ),
      ).toBe(1);
      // The listener sends nothing more: the notification arrives on its own.
      const arrived = new Promise<void>((resolve) => (notified = resolve));
      await direct.query("NOTIFY jobs, 'job 42'");
      await arrived;
      expect(received.map((n) => [n.channel, n.payload])).toEqual([['jobs', 'job 42']]);

      // One that arrives while the client's transaction is measured comes with the guard's own ROLLBACK (at
      // the held COMMIT), never meant for the client: the notification still reaches it.
      await listener.query('BEGIN');
      await listener.query("INSERT INTO t VALUES (50, 'fifty')");
      await direct.query("NOTIFY jobs, 'job 44'");
      const commit = await listener.query('COMMIT').then(
        () => undefined,
        (e: pg.DatabaseError) => e,
      );
      expect(commit?.code).toBe('PA001');
      await listener.query('SELECT 1');
      expect(received.map((n) => n.payload)).toEqual(['job 42', 'job 44']);
      expect(await ids()).toBe('1,2,3,4,5');

      await listener.query('UNLISTEN jobs');
      await direct.query("NOTIFY jobs, 'job 43'");
      expect((await listener.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(received).toHaveLength(2);

      // NOTIFY from a guard client is a side effect: held; a session listening directly gets nothing.
      const watched: pg.Notification[] = [];
      watcher.on('notification', (n) => watched.push(n));
      await watcher.query('LISTEN jobs');
      for (const sql of ["NOTIFY jobs, 'from the guard'", "SELECT pg_notify('jobs', 'from the guard')"]) {
        const error = await listener.query(sql).then(
          () => undefined,
          (e: pg.DatabaseError) => e,
        );
        expect(error?.code).toBe('PA001');
      }
      await watcher.query('SELECT 1');
      expect(watched).toEqual([]);
    } finally {
      await Promise.all([listener.end(), direct.end(), watcher.end()]);
    }
  });
});

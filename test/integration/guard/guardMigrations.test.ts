/**
 * A real migration tool through `pg-agent guard`: the knex CLI (`knex migrate:latest`, knex + pg from npm)
 * with a knexfile pointing at the guard URL, in its own process. DDL inside the migration transaction runs
 * for real while measured only when cheap (src/guard/transaction/ddlInTransaction.ts, SPEC §5 4a); the
 * transaction is held at COMMIT on one ticket, approved, and the identical rerun commits once. Heavy DDL (a
 * rewrite) is analysed, not executed: held at that statement (PA001), run only in an approved rerun (the rest
 * held once more at COMMIT). Every assertion reads the database.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessRun } from '../../support/cliProcess';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded, storedTicket } from '../../support/guardProcess';
import { connect as connectTo, failure } from '../../support/pgClients';
import { runTool } from '../../support/toolRun';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';

const KNEX_CLI = join(process.cwd(), 'node_modules', 'knex', 'bin', 'cli.js');
describe.skipIf(!postgresAvailable)('pg-agent guard: knex migrations', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let project: string;
  const value = (sql: string) => queryValue(db.url, sql);
  const count = async (sql: string) => Number(await value(sql));
  const ticketFile = (id: string) => storedTicket(guard, id);
  const migration = (name: string, up: string) =>
    writeFileSync(
      join(project, 'migrations', name),
      `exports.up = (knex) => ${up};\nexports.down = () => undefined;\n`,
    );

  /** `knex migrate:latest` (or another knex command) as its own process, through the guard. */
  const knex = (command = 'migrate:latest'): Promise<ProcessRun> =>
    runTool(process.execPath, [KNEX_CLI, command, '--knexfile', join(project, 'knexfile.js')], {
      cwd: project,
      env: { GUARD_URL: guard.url, HOME: project },
    });

  /** Nothing of the client left open upstream: no session idle in a transaction, no relation lock of another session. */
  const nothingLeftOpen = async () => {
    expect(
      await count(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
      ),
    ).toBe(0);
    expect(
      await count(
        "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = current_database() AND l.locktype = 'relation' AND l.pid <> pg_backend_pid()",
      ),
    ).toBe(0);
  };

  const approve = async (id: string) => expect((await guard.pgAgent(['approvals', 'approve', id])).code).toBe(0);

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_mig', [
      "CREATE TABLE accounts (id serial PRIMARY KEY, name text NOT NULL); INSERT INTO accounts (name) VALUES ('ann'), ('bob'), ('cy')",
      'CREATE VIEW account_names AS SELECT name FROM accounts',
      'CREATE TABLE big AS SELECT g AS id FROM generate_series(1, 20000) g; ANALYZE big',
      'CREATE TABLE ledger (id serial PRIMARY KEY, amount int NOT NULL); INSERT INTO ledger (amount) SELECT g FROM generate_series(1, 50) g; ANALYZE ledger',
    ]));
    project = mkdtempSync(join(tmpdir(), 'pgagent-knex-'));
    mkdirSync(join(project, 'migrations'));
    // The knex CLI wants its project's own install: the project's node_modules is this repository's.
    symlinkSync(join(process.cwd(), 'node_modules'), join(project, 'node_modules'));
    writeFileSync(
      join(project, 'knexfile.js'),
      "module.exports = { client: 'pg', connection: process.env.GUARD_URL, pool: { min: 0, max: 1 }, migrations: { directory: './migrations' } };\n",
    );
  }, 60_000);

  afterAll(() => stopGuarded(guard, db));

  it("holds knex's first run statement by statement, then the migration transaction on one ticket; approved, the identical rerun commits once", async () => {
    migration(
      '001_widgets.js',
      "knex.schema.createTable('widgets', (t) => { t.increments('id'); t.string('name').notNullable(); t.index(['name']); })",
    );
    // knex creates its own two tables and lock row outside any transaction: each is a statement held on its own.
    const bootstrap: string[] = [];
    for (const expected of [
      'create table "knex_migrations"',
      'create table "knex_migrations_lock"',
      'insert into "knex_migrations_lock"',
    ]) {
      const run = await knex();
      expect(run.code).not.toBe(0);
      const ticket = ticketIn(run.stdout + run.stderr);
      expect(ticket).not.toBe('');
      expect(ticketFile(ticket).sql).toContain(expected);
      bootstrap.push(ticket);
      await approve(ticket);
    }
    expect(new Set(bootstrap).size).toBe(3);

    // The migration transaction: measured (its CREATE TABLE and CREATE INDEX ran in the client's transaction), held at COMMIT.
    const held = await knex();
    expect(held.code).not.toBe(0);
    expect(held.stdout + held.stderr).toContain('COMMIT; - held for approval: ticket');
    const ticket = ticketIn(held.stdout + held.stderr);
    expect(bootstrap).not.toContain(ticket);
    const stored = ticketFile(ticket);
    expect(stored.sql).toContain('create table "widgets"');
    expect(stored.sql).toContain('insert into "knex_migrations"');
    expect(stored.impact.warnings.join('\n')).toContain('DDL run in the measured transaction: create table "widgets"');
    // knex's migration_time (a Date it binds) is the one value that varies on retry: named on the card before approval.
    expect(stored.impact.warnings.join('\n')).toMatch(
      /Varies on retry: statement \d+, value \d+ \([^)]*\): the current time/,
    );
    // Rolled back: no table, no migration row, the lock row free, nothing left open upstream.
    expect(await value("SELECT to_regclass('widgets') IS NULL")).toBe(true);
    expect(await count('SELECT count(*) FROM knex_migrations')).toBe(0);
    expect(await count('SELECT count(*) FROM knex_migrations_lock WHERE is_locked = 0')).toBe(1);
    await nothingLeftOpen();

    await approve(ticket);
    const committed = await knex();
    expect(committed.stderr).not.toContain('PA00');
    expect(committed.code).toBe(0);
    expect(
      await value(
        "SELECT to_regclass('widgets') IS NOT NULL AND EXISTS (SELECT FROM pg_indexes WHERE tablename = 'widgets' AND indexdef LIKE '%(name)%')",
      ),
    ).toBe(true);
    expect(await value("SELECT string_agg(name || ':' || batch, ',') FROM knex_migrations")).toBe('001_widgets.js:1');
    expect(await count('SELECT count(*) FROM knex_migrations_lock WHERE is_locked = 0')).toBe(1);
    expect(ticketFile(ticket).status).toBe('EXECUTED');
    await nothingLeftOpen();

    // Nothing to migrate: `migrate:list` only reads; `migrate:latest` still takes knex's lock row in a
    // transaction (UPDATE is_locked 0 → 1 → 0), which is a write: held, and nothing changes.
    const list = await knex('migrate:list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('No Pending Migration files Found');
    const again = await knex();
    expect(again.stdout + again.stderr).toContain('COMMIT; - held for approval: ticket');
    const noop = ticketFile(ticketIn(again.stdout + again.stderr));
    expect(noop.sql).not.toContain('create table');
    expect(await count('SELECT count(*) FROM knex_migrations')).toBe(1);
    await nothingLeftOpen();
  }, 120_000);

  it('runs a cheap ADD COLUMN on an existing non-empty small table while measuring; approved, commits once', async () => {
    migration('002_nickname.js', "knex.schema.alterTable('accounts', (t) => { t.text('nickname'); })");
    const held = await knex();
    const ticket = ticketIn(held.stdout + held.stderr);
    expect(ticket).not.toBe('');
    const stored = ticketFile(ticket);
    expect(stored.sql).toContain('alter table "accounts" add column "nickname" text');
    // The ticket shows the DDL with its 4a analysis: the lock, what it blocks, on which table.
    expect(stored.impact.warnings.join('\n')).toMatch(
      /DDL run in the measured transaction: alter table "accounts" add column "nickname" text — ACCESS EXCLUSIVE on public\.accounts \(.*\), blocking its reads and writes until COMMIT/,
    );
    expect(stored.impact.locks).toEqual(
      expect.arrayContaining([expect.objectContaining({ table: 'public.accounts', mode: 'ACCESS EXCLUSIVE' })]),
    );
    expect(
      await count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'accounts'::regclass AND attname = 'nickname'"),
    ).toBe(0);
    await nothingLeftOpen();
    await approve(ticket);
    const committed = await knex();
    expect(committed.code).toBe(0);
    expect(
      await count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'accounts'::regclass AND attname = 'nickname'"),
    ).toBe(1);
    expect(await count('SELECT count(*) FROM accounts')).toBe(3);
    expect(await count("SELECT count(*) FROM knex_migrations WHERE name = '002_nickname.js'")).toBe(1);
  }, 120_000);

  it('holds a rewrite inside the migration at that statement (PA001, analysed, not executed); approved, the rerun runs it and is held once more for the rest; approved, commits once', async () => {
    migration('003_amount_bigint.js', "knex.raw('ALTER TABLE ledger ALTER COLUMN amount TYPE bigint')");
    const node = async () => Number(await value("SELECT pg_relation_filenode('ledger')"));
    const type = () =>
      value(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'ledger'::regclass AND attname = 'amount'",
      );
    const before = await node();
    const nothingKept = async () => {
      expect(await type()).toBe('integer');
      expect(await count("SELECT count(*) FROM knex_migrations WHERE name = '003_amount_bigint.js'")).toBe(0);
      expect(await count('SELECT count(*) FROM knex_migrations_lock WHERE is_locked = 0')).toBe(1);
      await nothingLeftOpen();
    };
    // First run: held at the ALTER (statements 1..N, N analysed): nothing rewritten, nothing kept, no lock.
    const heldAtAlter = await knex();
    expect(heldAtAlter.code).not.toBe(0);
    expect(heldAtAlter.stdout + heldAtAlter.stderr).toContain('is heavy DDL, analysed, not executed');
    const first = ticketIn(heldAtAlter.stdout + heldAtAlter.stderr);
    expect(first).not.toBe('');
    const firstTicket = ticketFile(first);
    expect(firstTicket.sql).toMatch(
      /update "knex_migrations_lock"[^\n]*;\nALTER TABLE ledger ALTER COLUMN amount TYPE bigint;$/,
    );
    expect(firstTicket.impact.warnings.join('\n')).toContain('would rewrite public.ledger under ACCESS EXCLUSIVE');
    expect(firstTicket.impact.warnings.join('\n')).toContain('not measured from statement 2 on');
    expect(firstTicket.impact.locks).toEqual(
      expect.arrayContaining([expect.objectContaining({ table: 'public.ledger', mode: 'ACCESS EXCLUSIVE' })]),
    );
    expect(await node()).toBe(before);
    await nothingKept();
    // The same run again before the decision finds the same ticket.
    const again = await knex();
    expect(ticketIn(again.stdout + again.stderr)).toBe(first);
    await approve(first);

    // Approved: the rerun runs the rewrite for real, measures the rest, and is held at COMMIT on a new ticket.
    const heldAtCommit = await knex();
    expect(heldAtCommit.code).not.toBe(0);
    expect(heldAtCommit.stdout + heldAtCommit.stderr).toContain('COMMIT; - held for approval: ticket');
    const second = ticketIn(heldAtCommit.stdout + heldAtCommit.stderr);
    expect([first, ''].includes(second)).toBe(false);
    const secondTicket = ticketFile(second);
    expect(secondTicket.sql).toContain('ALTER TABLE ledger ALTER COLUMN amount TYPE bigint;');
    expect(secondTicket.sql).toContain('insert into "knex_migrations"');
    expect(secondTicket.impact.warnings.join('\n')).toContain(
      `is heavy DDL approved on ticket ${first}: it ran for real in this measured run`,
    );
    // The rewrite ran and was rolled back with the rest: the type and the migration rows are as before.
    await nothingKept();
    expect(ticketFile(first).status).toBe('APPROVED');
    await approve(second);

    const committed = await knex();
    expect(committed.stderr).not.toContain('PA00');
    expect(committed.code).toBe(0);
    expect(await type()).toBe('bigint');
    expect(await node()).not.toBe(before);
    expect(await count("SELECT count(*) FROM knex_migrations WHERE name = '003_amount_bigint.js'")).toBe(1);
    expect(await count('SELECT count(*) FROM knex_migrations_lock WHERE is_locked = 0')).toBe(1);
    expect(await count('SELECT count(*) FROM ledger')).toBe(50);
    expect(ticketFile(second).status).toBe('EXECUTED');
    // The shorter ticket never committed anything: it stays APPROVED, and no transaction of its templates is left to run.
    expect(ticketFile(first).status).toBe('APPROVED');
    await nothingLeftOpen();
  }, 120_000);

  const connect = () => connectTo(guard.url, 'guard-ddl');

  it('node-postgres: new objects run while measuring (simple and extended protocol); the approved retry must carry the identical DDL text', async () => {
    const client = await connect();
    const made = (width: number) => async () => {
      await client.query('BEGIN');
      await client.query(`CREATE TABLE made_inside (id int PRIMARY KEY, label varchar(${width}))`);
      // A named statement: Parse, then Bind (a prepared statement reused by the retry is only bound).
      await client.query({ name: 'made-index', text: 'CREATE INDEX made_inside_label ON made_inside (label)' });
      await client.query('INSERT INTO made_inside VALUES ($1, $2)', [1, 'one']);
      return failure(client.query('COMMIT'));
    };
    try {
      const held = await made(10)();
      expect(held?.code).toBe('PA001');
      const ticket = ticketIn(held?.message ?? '');
      // The client is still connected: its upstream session rolled back, holds nothing, is not in a transaction.
      expect(await value("SELECT to_regclass('made_inside') IS NULL")).toBe(true);
      await nothingLeftOpen();
      await approve(ticket);
      // Same templates (PostgreSQL's fingerprint ignores varchar's length), other DDL: not covered, new ticket.
      const wider = await made(1000)();
      expect(wider?.code).toBe('PA001');
      expect(wider?.message).toContain(
        `the approved ticket ${ticket} did not cover it (DDL not in the ticket: CREATE TABLE made_inside (id int PRIMARY KEY, label varchar(1000)))`,
      );
      expect(await value("SELECT to_regclass('made_inside') IS NULL")).toBe(true);
      expect(await made(10)()).toBeUndefined();
      expect(
        await value(
          "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'made_inside'::regclass AND attname = 'label'",
        ),
      ).toBe('character varying(10)');
      expect(await count("SELECT count(*) FROM made_inside WHERE label = 'one'")).toBe(1);
      expect(await value("SELECT to_regclass('made_inside_label') IS NOT NULL")).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('node-postgres: a strong lock on a table that is not small is analysed, not executed (held at it, PA001); a statement that runs only outside a transaction is refused (PA002)', async () => {
    const client = await connect();
    try {
      await client.query('BEGIN');
      await client.query("INSERT INTO accounts (name) VALUES ('dee')");
      const strong = await failure(client.query('ALTER TABLE big ADD COLUMN note text'));
      expect(strong?.code).toBe('PA001');
      expect(strong?.message).toContain('statement 2 is heavy DDL, analysed, not executed');
      expect(ticketFile(ticketIn(strong?.message ?? '')).impact.warnings.join('\n')).toContain(
        'would hold ACCESS EXCLUSIVE on public.big (20k rows',
      );
      await nothingLeftOpen();
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      const concurrent = await failure(client.query('CREATE INDEX CONCURRENTLY accounts_name ON accounts (name)'));
      expect(concurrent?.code).toBe('PA002');
      expect(concurrent?.message).toContain('runs only outside a transaction');
      await client.query('ROLLBACK');
      expect(
        await count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'big'::regclass AND attname = 'note'"),
      ).toBe(0);
      expect(await count("SELECT count(*) FROM accounts WHERE name = 'dee'")).toBe(0);
      expect(await value("SELECT to_regclass('accounts_name') IS NULL")).toBe(true);
      await nothingLeftOpen();
    } finally {
      await client.end();
    }
  });

  it('node-postgres: cheap DDL waits for its lock at most the lock budget, so it never queues other sessions for long (55P03)', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    const client = await connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE accounts IN ACCESS SHARE MODE');
      await client.query('BEGIN');
      const waited = await failure(client.query('ALTER TABLE accounts ADD COLUMN waited int'));
      expect(waited?.code).toBe('55P03');
      await client.query('ROLLBACK');
      await holder.query('ROLLBACK');
      expect(
        await count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'accounts'::regclass AND attname = 'waited'"),
      ).toBe(0);
      await nothingLeftOpen();
    } finally {
      await client.end();
      await holder.end();
    }
  });

  it('node-postgres: nothing whose effect a ROLLBACK does not undo runs to be measured (pg_terminate_backend, setval, a DO block, CREATE TABLE AS with a side effect)', async () => {
    const victim = await connectTo(db.url, 'guard-victim');
    const pid = Number((await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    const client = await connect();
    try {
      for (const sql of [
        `SELECT pg_terminate_backend(${pid})`,
        `CREATE TABLE terminated AS SELECT pg_terminate_backend(${pid})`,
        `DO $$BEGIN PERFORM pg_terminate_backend(${pid}); END$$`,
        "SELECT setval('ledger_id_seq', 1)",
      ]) {
        await client.query('BEGIN');
        const refused = await failure(client.query(sql));
        expect(refused?.code, sql).toBe('PA002');
        expect(refused?.message).toContain('cannot be run to be measured');
        await client.query('ROLLBACK');
      }
      expect(
        await count(
          "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'guard-victim'",
        ),
      ).toBe(1);
      expect(await count('SELECT last_value FROM ledger_id_seq')).toBeGreaterThan(1);
      expect(await value("SELECT to_regclass('terminated') IS NULL")).toBe(true);
      // Advancing a sequence is what any measured INSERT does (the ticket says those values are gone): measured.
      await client.query('BEGIN');
      await client.query("SELECT nextval('ledger_id_seq')");
      expect((await failure(client.query('COMMIT')))?.code).toBe('PA001');
    } finally {
      await client.end();
      await victim.end();
    }
  });

  it('node-postgres: after a blocking DDL lock, a long statement is cancelled (57014): the lock does not outlast the budget', async () => {
    const client = await connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE accounts ADD COLUMN slow int');
      expect((await failure(client.query('SELECT pg_sleep(5)')))?.code).toBe('57014');
      await client.query('ROLLBACK');
      expect(
        await count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'accounts'::regclass AND attname = 'slow'"),
      ).toBe(0);
      // Replacing a view others read takes ACCESS EXCLUSIVE on it (the lock model gives CREATE VIEW none): the same budget.
      await client.query('BEGIN');
      await client.query('CREATE OR REPLACE VIEW account_names AS SELECT name, id FROM accounts');
      expect((await failure(client.query('SELECT pg_sleep(5)')))?.code).toBe('57014');
      await client.query('ROLLBACK');
      expect(await count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'account_names'::regclass")).toBe(1);
      await nothingLeftOpen();
    } finally {
      await client.end();
    }
  });

  it('node-postgres: a client that pauses inside a transaction holding a blocking DDL lock loses it (and the transaction) to the idle budget', async () => {
    const client = await connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE accounts ADD COLUMN paused int');
      // The client now sits idle in its transaction: PostgreSQL ends its upstream session, and the lock with it.
      const free = async () =>
        count("SELECT count(*) FROM pg_locks WHERE relation = 'accounts'::regclass AND pid <> pg_backend_pid()");
      while ((await free()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(
        await count("SELECT count(*) FROM pg_attribute WHERE attrelid = 'accounts'::regclass AND attname = 'paused'"),
      ).toBe(0);
      expect(await failure(client.query('COMMIT'))).toBeDefined();
      await nothingLeftOpen();
    } finally {
      await client.end().catch(() => undefined);
    }
  }, 30_000);
});

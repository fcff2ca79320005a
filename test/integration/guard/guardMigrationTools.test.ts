/**
 * Migration tools through `pg-agent guard` take one approval for their migration transaction, its bookkeeping
 * rows included: node-pg-migrate (its CLI from npm, in its own process; its `pgmigrations` row is written with
 * the server's NOW()), and a Prisma-style `_prisma_migrations` insert sent by node-postgres with a client UUID
 * and timestamps as Bind parameters (they vary on retry: a fresh v4 UUID, the current time). Approved once, each
 * commits once: the tables and bookkeeping rows are read in the database. (knex: guardMigrations.test.ts.)
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess, storedTicket } from '../../support/guardProcess';
import { transactionError } from '../../support/pgClients';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';
import { ticketIn } from '../../support/psqlRun';
import { runTool } from '../../support/toolRun';

const PG_MIGRATE = join(process.cwd(), 'node_modules', 'node-pg-migrate', 'dist', 'bundle', 'index.js');
describe.skipIf(!postgresAvailable)('pg-agent guard: migration tools, one approval each', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let project: string;
  const value = async (sql: string) => String(await queryValue(db.url, sql));
  const ticketFile = (id: string) => storedTicket(guard, id);
  const approve = async (id: string) => expect((await guard.pgAgent(['approvals', 'approve', id])).code).toBe(0);

  const pgMigrate = async (): Promise<{ code: number | null; output: string }> => {
    const env = { DATABASE_URL: guard.url, HOME: project };
    const ran = await runTool(process.execPath, [join(project, 'migrate.mjs')], { cwd: project, env });
    return { code: ran.code, output: ran.stdout + ran.stderr };
  };

  beforeAll(async () => {
    db = await createScratchDatabase('i32_guard_tools');
    await execSql(
      db.url,
      `CREATE TABLE "_prisma_migrations" (id varchar(36) PRIMARY KEY, checksum varchar(64) NOT NULL,
         finished_at timestamptz, migration_name varchar(255) NOT NULL, logs text, rolled_back_at timestamptz,
         started_at timestamptz NOT NULL DEFAULT now(), applied_steps_count int NOT NULL DEFAULT 0)`,
    );
    project = mkdtempSync(join(tmpdir(), 'i32_pgmigrate_'));
    mkdirSync(join(project, 'migrations'));
    writeFileSync(join(project, 'package.json'), '{"type": "commonjs"}\n');
    // node-pg-migrate's own runner (its CLI always sends SET search_path, a session change the guard refuses).
    writeFileSync(
      join(project, 'migrate.mjs'),
      `import { runner } from ${JSON.stringify(PG_MIGRATE)};
await runner({ databaseUrl: process.env.DATABASE_URL, dir: ${JSON.stringify(join(project, 'migrations'))}, direction: 'up', migrationsTable: 'pgmigrations', noLock: true, checkOrder: false, count: Infinity, log: (m) => console.log(m) });
`,
    );
    guard = await startGuardProcess(db.url);
  }, 60_000);

  afterAll(async () => {
    await guard?.stop();
    await db?.drop();
  });

  it('node-pg-migrate: its table first (a statement of its own), then the migration transaction approved once commits once', async () => {
    writeFileSync(
      join(project, 'migrations', '1700000000000_gadgets.js'),
      "exports.up = (pgm) => { pgm.createTable('gadgets', { id: 'id', name: { type: 'text', notNull: true } }); pgm.sql(\"INSERT INTO gadgets (name) VALUES ('first')\"); };\nexports.down = false;\n",
    );
    // Statements outside a transaction (its own pgmigrations table) are held one by one until approved.
    let run = await pgMigrate();
    const outside: string[] = [];
    for (
      let i = 0;
      i < 5 &&
      run.code !== 0 &&
      !/COMMIT|pgmigrations" \(name, run_on\)/i.test(ticketIn(run.output) ? ticketFile(ticketIn(run.output)).sql : '');
      i++
    ) {
      const ticket = ticketIn(run.output);
      expect(ticket, run.output).not.toBe('');
      outside.push(ticket);
      await approve(ticket);
      run = await pgMigrate();
    }
    // The migration transaction: held at COMMIT on one ticket, nothing kept.
    expect(run.code).not.toBe(0);
    const ticket = ticketIn(run.output);
    expect(outside).not.toContain(ticket);
    const stored = ticketFile(ticket);
    expect(stored.sql).toContain('CREATE TABLE "gadgets"');
    expect(stored.sql).toMatch(/INSERT INTO "public"\."pgmigrations" \(name, run_on\)/);
    expect(await value("SELECT to_regclass('gadgets') IS NULL")).toBe('true');
    expect(await value('SELECT count(*) FROM pgmigrations')).toBe('0');

    await approve(ticket);
    const committed = await pgMigrate();
    expect(committed.output).not.toContain('PA00');
    expect(committed.code).toBe(0);
    expect(await value("SELECT string_agg(name, ',') FROM gadgets")).toBe('first');
    expect(await value("SELECT string_agg(name, ',') FROM pgmigrations")).toBe('1700000000000_gadgets');
    expect(ticketFile(ticket).status).toBe('EXECUTED');
  });

  it('a Prisma-style _prisma_migrations insert (client UUID, timestamps as parameters) commits on its one approved retry', async () => {
    const migrate = () =>
      transactionError(guard.url, 'i32-prisma', async (client) => {
        const id = crypto.randomUUID();
        await client.query(
          'INSERT INTO "_prisma_migrations" ("id", "checksum", "migration_name", "started_at") VALUES ($1, $2, $3, $4)',
          [id, 'a'.repeat(64), '20261129_init', new Date()],
        );
        await client.query('CREATE TABLE sprockets (id serial PRIMARY KEY, size int)');
        await client.query(
          'INSERT INTO "_prisma_migrations" ("id", "checksum", "migration_name", "started_at", "finished_at", "applied_steps_count") VALUES ($1, $2, $3, $4, $5, $6)',
          [crypto.randomUUID(), 'b'.repeat(64), '20261129_sprockets', new Date(), new Date(), 1],
        );
      });
    const held = await migrate();
    expect(held).toContain('held for approval');
    const ticket = ticketIn(held ?? '');
    const kinds = ticketFile(ticket).transaction?.statements.map((s) => (s.varies ?? []).map((v) => v.kind));
    // The client's UUIDs and timestamps vary on retry, named on the card; the checksums and names do not.
    expect(kinds).toEqual([['uuid', 'timestamp'], [], ['uuid', 'timestamp', 'timestamp']]);
    expect(await value('SELECT count(*) FROM "_prisma_migrations"')).toBe('0');
    await approve(ticket);
    expect(await migrate()).toBeUndefined();
    expect(await value("SELECT to_regclass('sprockets') IS NOT NULL")).toBe('true');
    expect(
      await value(
        "SELECT string_agg(migration_name || ':' || applied_steps_count, ',' ORDER BY migration_name) FROM \"_prisma_migrations\"",
      ),
    ).toBe('20261129_init:0,20261129_sprockets:1');
    expect(ticketFile(ticket).status).toBe('EXECUTED');
  });
});

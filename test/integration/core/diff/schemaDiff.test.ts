/**
 * `pg-agent diff` between two scratch databases (real processes, the real server): the held steps, approved and
 * run on A one after the other, make A's schema equal to B's; the first ticket carries its lock analysis; the
 * migration files run with the tools that read them (psql for plain SQL, knex's own migrator) make a copy of A
 * equal to B; node-pg-migrate and Prisma files are written in their tools' shapes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAgentProcess } from '../../../support/cliProcess';
import { comparable, snapshotOf } from '../../../support/diffSnapshots';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const SCHEMA_A = `
CREATE TYPE status AS ENUM ('new', 'paid');
CREATE TABLE customers (id bigserial PRIMARY KEY, email text, name text, legacy text);
CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id bigint, total numeric(10,2), status status DEFAULT 'new');
CREATE TABLE old_notes (id int PRIMARY KEY, body text);
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
INSERT INTO customers (email, name) SELECT 'c' || g || '@x.org', 'n' || g FROM generate_series(1, 50) g;
INSERT INTO orders (customer_id, total) SELECT g, g * 3 FROM generate_series(1, 50) g;`;

const SCHEMA_B = `
CREATE SCHEMA billing;
CREATE TYPE status AS ENUM ('new', 'paid');
CREATE TYPE billing.kind AS ENUM ('card', 'wire');
CREATE TABLE customers (id bigserial PRIMARY KEY, email text NOT NULL, name varchar(200), created_at timestamptz DEFAULT now());
CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id bigint REFERENCES customers(id), total numeric(12,2) CHECK (total >= 0), status status DEFAULT 'paid');
CREATE INDEX orders_customer_idx ON orders (customer_id);
CREATE UNIQUE INDEX customers_email_idx ON customers (lower(email));
CREATE TABLE billing.payments (id bigserial PRIMARY KEY, order_id bigint NOT NULL REFERENCES orders(id), kind billing.kind);
CREATE INDEX payments_order_idx ON billing.payments (order_id);
CREATE VIEW big_orders AS SELECT id, total, status FROM orders WHERE total > 100;
CREATE VIEW customer_totals AS SELECT c.id, sum(o.total) AS total FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id;`;

describe.runIf(postgresAvailable)('pg-agent diff: schema A to schema B', () => {
  const dbs: ScratchDatabase[] = [];
  let a: ScratchDatabase;
  let b: ScratchDatabase;
  const workspace = mkdtempSync(join(tmpdir(), 'i33b-diff-'));
  const env = { HOME: workspace, XDG_CONFIG_HOME: join(workspace, 'xdg') };
  const cli = (argv: string[]) => pgAgentProcess([...argv, '--workspace', workspace], { cwd: workspace, env });
  const fresh = async (sql: string) => {
    const db = await createScratchDatabase('i33b_diff');
    dbs.push(db);
    await execSql(db.url, sql);
    return db;
  };

  beforeAll(async () => {
    a = await fresh(SCHEMA_A);
    b = await fresh(SCHEMA_B);
  }, 60_000);

  afterAll(async () => {
    for (const db of dbs) await db.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('holds each step as one analysed ticket; run in turn on A they make A equal to B', async () => {
    expect(comparable(await snapshotOf(a.url))).not.toEqual(comparable(await snapshotOf(b.url)));
    const phases: string[] = [];
    for (let round = 0; round < 8; round++) {
      const diff = await cli(['diff', '--from', a.url, '--to', b.url, '--json']);
      const out = JSON.parse(diff.stdout) as {
        status: string;
        step: string;
        ticket: { id: string };
        impact: { locks: { table: string; mode: string }[]; lint: { rule: string }[]; transactional: boolean };
      };
      if (out.status === 'equal') break;
      expect(diff.code, diff.stderr).toBe(3);
      phases.push(out.step);
      if (out.step === 'change') {
        // The analysis of the step: locks per table, and the lint of its DDL.
        expect(out.impact.locks.map((l) => l.table)).toEqual(
          expect.arrayContaining(['public.orders', 'public.customers']),
        );
        expect(out.impact.locks.some((l) => l.mode === 'ACCESS EXCLUSIVE')).toBe(true);
      }
      expect((await cli(['approvals', 'approve', out.ticket.id, '--comment', 'diff step'])).code).toBe(0);
      const ran = await cli(['exec', '--ticket', out.ticket.id, '--db', a.url]);
      expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    }
    expect(phases[0]).toBe('change');
    expect(phases).toContain('validate');
    expect(phases).toContain('concurrent');
    expect(comparable(await snapshotOf(a.url))).toEqual(comparable(await snapshotOf(b.url)));
  }, 240_000);

  it('writes plain SQL files that psql runs on a copy of A to reach B', async () => {
    const copy = await fresh(SCHEMA_A);
    const dir = join(workspace, 'sql-migrations');
    const written = await cli([
      'diff',
      '--from',
      copy.url,
      '--to',
      b.url,
      '--write-migration',
      dir,
      '--tool',
      'sql',
      '--json',
    ]);
    expect(written.code, written.stderr).toBe(0);
    const files = readdirSync(dir).sort();
    expect(files.length).toBeGreaterThan(2);
    for (const f of files)
      execFileSync('psql', [copy.url, '-v', 'ON_ERROR_STOP=1', '-q', '-f', join(dir, f)], { stdio: 'pipe' });
    expect(comparable(await snapshotOf(copy.url))).toEqual(comparable(await snapshotOf(b.url)));
  }, 120_000);

  it("picks knex from the workspace's package.json; knex's own migrator runs the files and reaches B", async () => {
    const copy = await fresh(SCHEMA_A);
    const project = mkdtempSync(join(tmpdir(), 'i33b-knex-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ dependencies: { knex: '^3' } }));
    const dir = join(project, 'migrations');
    const written = await pgAgentProcess(
      ['diff', '--from', copy.url, '--to', b.url, '--write-migration', dir, '--workspace', project, '--json'],
      { cwd: project, env },
    );
    expect(JSON.parse(written.stdout)).toMatchObject({ status: 'written', tool: 'knex' });
    const client = knex({ client: 'pg', connection: copy.url });
    try {
      await client.migrate.latest({ directory: dir, loadExtensions: ['.js'] });
    } finally {
      await client.destroy();
    }
    expect(comparable(await snapshotOf(copy.url))).toEqual(comparable(await snapshotOf(b.url)));
    rmSync(project, { recursive: true, force: true });
  }, 120_000);

  it('writes node-pg-migrate and Prisma migrations in their shapes, also from a snapshot file', async () => {
    const npm = join(workspace, 'npm-migrations');
    expect(
      (await cli(['diff', '--from', a.url, '--to', b.url, '--write-migration', npm, '--tool', 'node-pg-migrate'])).code,
    ).toBe(0);
    // A is B by now (first test): the diff against the original schema A from a snapshot file.
    const snap = join(workspace, 'a.json');
    const original = await fresh(SCHEMA_A);
    expect((await cli(['diff', '--from', original.url, '--snapshot', snap])).code).toBe(0);
    const pnpm = join(workspace, 'npm2');
    const toPnpm = () =>
      cli(['diff', '--from', snap, '--to', b.url, '--write-migration', pnpm, '--tool', 'node-pg-migrate']);
    const w = await toPnpm();
    expect(w.code, w.stderr).toBe(0);
    const js = readdirSync(pnpm)
      .sort()
      .map((f) => readFileSync(join(pnpm, f), 'utf8'));
    expect(js[0]).toContain('exports.up = (pgm) => {');
    expect(js.some((t) => t.includes('pgm.noTransaction();') && t.includes('CONCURRENTLY'))).toBe(true);
    const prisma = join(workspace, 'prisma', 'migrations');
    expect(
      (await cli(['diff', '--from', snap, '--to', b.url, '--write-migration', prisma, '--tool', 'prisma'])).code,
    ).toBe(0);
    const steps = readdirSync(prisma).sort();
    expect(readFileSync(join(prisma, steps[0] ?? '', 'migration.sql'), 'utf8')).toContain(
      'CREATE TABLE "billing"."payments"',
    );
    const again = await toPnpm();
    expect(again.code).toBe(0); // written a second later: new names, the earlier files untouched
    expect(readdirSync(pnpm).length).toBe(js.length * 2);
  }, 120_000);

  it('bad input: no --to, an unknown tool, a file that is not a snapshot (exit 2, nothing written)', async () => {
    expect((await cli(['diff', '--from', a.url])).code).toBe(2);
    expect(
      (await cli(['diff', '--from', a.url, '--to', b.url, '--write-migration', 'x', '--tool', 'flyway'])).code,
    ).toBe(2);
    const notSnapshot = join(workspace, 'not.json');
    writeFileSync(notSnapshot, '{"tables": []}');
    const bad = await cli(['diff', '--from', notSnapshot, '--to', b.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a pg-agent schema snapshot');
  }, 60_000);
});

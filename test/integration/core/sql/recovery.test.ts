// Issue 25: a way back from destructive DDL. Approved with a recovery window, DROP TABLE moves the table to a
// quarantine schema, DROP COLUMN and TRUNCATE copy the data aside first; `undo` (proposeUndo) holds the SQL that
// puts it back for approval; once approved and run, the contents are identical (checksums), with the indexes,
// constraints, foreign keys and views the impact reported. A copy above the size limit: no way back, said so.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import { loadParser } from '../../../../src/core/sql/parse';
import { listEntries } from '../../../../src/core/sql/recovery/quarantineStore';
import { proposePurge, proposeUndo } from '../../../../src/core/sql/undoProposal';
import { runSql } from '../../../../src/core/sql/runSql';
import type { SafetySettings } from '../../../../src/core/sql/safetySettings';
import { DEFAULT_RECOVERY, DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const SCHEMA = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO customers SELECT g, 'customer ' || g FROM generate_series(1, 50) g;
CREATE TABLE orders (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id int NOT NULL REFERENCES customers (id),
  total numeric(10,2) CHECK (total >= 0),
  note text NOT NULL DEFAULT 'none'
);
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX orders_note ON orders (note);
INSERT INTO orders (customer_id, total, note) SELECT 1 + g % 50, g * 1.5, 'note ' || g FROM generate_series(1, 500) g;
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
CREATE TABLE archive (id int PRIMARY KEY, body text);
INSERT INTO archive SELECT g, repeat('x', g % 40) FROM generate_series(1, 300) g;
ANALYZE;
`;

describe.runIf(postgresAvailable)('a way back from destructive DDL (issue 25)', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let store: FileTicketStore;
  const settings: SafetySettings = { ...DEFAULT_SAFETY };
  const request = { connection: 'c', requestedBy: 'tester', settings };

  const exec = (id: string) =>
    executeApproved(db, store, id, {
      ...settings,
      connection: 'c',
      by: 'tester',
      undo: workspaceUndoSink(mkdtempSync(join(tmpdir(), 'pgagent-recovery-undo-')), id),
      logger: silentLogger,
    });
  /** Proposes `sql`, approves it as a person, runs it. */
  async function approveAndRun(sql: string, extra: Partial<SafetySettings> = {}) {
    const outcome = await runSql(db, store, { ...request, sql, settings: { ...settings, ...extra } });
    if (outcome.status !== 'held') throw new Error(`expected held, got ${outcome.status}`);
    await store.decide(outcome.ticket.id, { approve: true, by: 'reviewer' });
    const done = await exec(outcome.ticket.id);
    expect(done.ticket.status).toBe('EXECUTED');
    return outcome;
  }
  /** `pg-agent undo`: held first (nothing restored yet), then approved and run. */
  async function undo(ticketId: string) {
    const proposal = await proposeUndo(db, store, ticketId, request);
    expect(proposal.ticket.status).toBe('PENDING_APPROVAL');
    await store.decide(proposal.ticket.id, { approve: true, by: 'reviewer' });
    await exec(proposal.ticket.id);
    return proposal;
  }
  const one = async <T>(sql: string) => (await db.query<T>(sql)).rows[0] as T;
  const checksum = async (sql: string) =>
    (await one<{ sum: string | null }>(`SELECT md5(string_agg(r::text, '|' ORDER BY r::text)) AS sum FROM (${sql}) r`))
      .sum;
  const exists = async (name: string) =>
    (await one<{ ok: boolean }>(`SELECT to_regclass('${name}') IS NOT NULL AS ok`)).ok;
  const indexes = async (table: string) =>
    (
      await db.query<{ d: string }>(`SELECT indexdef AS d FROM pg_indexes WHERE tablename = '${table}' ORDER BY 1`)
    ).rows.map((r) => r.d);
  const constraints = async (table: string) =>
    (
      await db.query<{ d: string }>(
        `SELECT conname || ' ' || pg_get_constraintdef(oid) AS d FROM pg_constraint WHERE conrelid = '${table}'::regclass ORDER BY 1`,
      )
    ).rows.map((r) => r.d);

  beforeAll(async () => {
    await loadParser();
    scratch = await createScratchDatabase();
    await execSql(scratch.url, SCHEMA);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    store = new FileTicketStore(mkdtempSync(join(tmpdir(), 'pgagent-recovery-')), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('DROP TABLE moves the table aside; undo brings it back identical, with its indexes', async () => {
    const before = { rows: await checksum('SELECT * FROM archive'), indexes: await indexes('archive') };
    const dropped = await approveAndRun('DROP TABLE archive');
    expect(dropped.impact.recovery).toEqual([
      expect.objectContaining({
        statement: 0,
        way: 'quarantine',
        targets: ['public.archive'],
        bytes: 0,
        retentionDays: 7,
      }),
    ]);
    expect(dropped.impact.recovery?.[0]?.summary).toContain('moved to a quarantine schema');
    expect(await exists('public.archive')).toBe(false);
    const [entry] = await db.withSession((s) => listEntries(s, { ticket: dropped.ticket.id }));
    expect(entry).toMatchObject({ kind: 'table', original: 'public.archive' });
    expect(await checksum(`SELECT * FROM "${entry?.id}".archive`)).toBe(before.rows);

    const proposal = await undo(dropped.ticket.id);
    expect(proposal.source).toBe('quarantine');
    // Its DROP SCHEMA of the emptied quarantine schema destroys nothing: the undo is not CRITICAL for it.
    expect(proposal.sql).toMatch(/DROP SCHEMA "pgagent_q_[^"]+";/);
    expect(proposal.impact.risk).not.toBe('CRITICAL');
    expect(proposal.impact.warnings.join('\n')).not.toContain('always CRITICAL');
    expect(await checksum('SELECT * FROM archive')).toBe(before.rows);
    expect(await indexes('archive')).toEqual(before.indexes);
    expect(await db.withSession((s) => listEntries(s, { ticket: dropped.ticket.id }))).toEqual([]);
    expect(
      await one<{ n: number }>(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = '${entry?.id}'`),
    ).toEqual({ n: 0 });
  });

  it('DROP TABLE … CASCADE: the view on it is dropped as CASCADE does, and the undo re-creates it with the table, identity and foreign key', async () => {
    const before = {
      rows: await checksum('SELECT * FROM orders'),
      view: await checksum('SELECT * FROM big_orders'),
      indexes: await indexes('orders'),
      constraints: await constraints('orders'),
    };
    const dropped = await approveAndRun('DROP TABLE orders CASCADE');
    expect(dropped.impact.recovery?.[0]?.way).toBe('quarantine');
    expect(await exists('public.orders')).toBe(false);
    expect(await exists('public.big_orders')).toBe(false);

    await undo(dropped.ticket.id);
    expect(await checksum('SELECT * FROM orders')).toBe(before.rows);
    expect(await checksum('SELECT * FROM big_orders')).toBe(before.view);
    expect(await indexes('orders')).toEqual(before.indexes);
    expect(await constraints('orders')).toEqual(before.constraints);
    // The identity still numbers on, and the foreign key still holds.
    await execSql(scratch.url, 'INSERT INTO orders (customer_id, total) VALUES (1, 1)');
    expect(await one<{ id: string }>('SELECT max(id)::text AS id FROM orders')).toEqual({ id: '501' });
    await expect(execSql(scratch.url, 'INSERT INTO orders (customer_id, total) VALUES (999, 1)')).rejects.toThrow(
      /foreign key/,
    );
    await execSql(scratch.url, 'DELETE FROM orders WHERE id = 501');
  });

  it('DROP COLUMN copies the values keyed by the primary key; undo adds the column back with values, default, NOT NULL and index', async () => {
    const before = await checksum('SELECT id, note FROM orders');
    const dropped = await approveAndRun('ALTER TABLE orders DROP COLUMN note');
    expect(dropped.impact.recovery).toEqual([
      expect.objectContaining({ way: 'copy', targets: ['public.orders.note'] }),
    ]);
    expect(dropped.impact.recovery?.[0]?.bytes).toBeGreaterThan(0);
    expect(
      (await db.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'note'"))
        .rows,
    ).toEqual([]);

    await undo(dropped.ticket.id);
    expect(await checksum('SELECT id, note FROM orders')).toBe(before);
    expect(
      await one(
        "SELECT is_nullable, column_default FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'note'",
      ),
    ).toEqual({ is_nullable: 'NO', column_default: "'none'::text" });
    expect(await indexes('orders')).toContain('CREATE INDEX orders_note ON public.orders USING btree (note)');
  });

  it('TRUNCATE … CASCADE copies both tables first; undo inserts them back, parents first', async () => {
    const before = {
      customers: await checksum('SELECT * FROM customers'),
      orders: await checksum('SELECT * FROM orders'),
    };
    const emptied = await approveAndRun('TRUNCATE customers CASCADE');
    expect(emptied.impact.recovery).toEqual([
      expect.objectContaining({ way: 'copy', targets: ['public.customers', 'public.orders'] }),
    ]);
    expect(
      await one('SELECT (SELECT count(*) FROM customers)::int AS c, (SELECT count(*) FROM orders)::int AS o'),
    ).toEqual({ c: 0, o: 0 });

    await undo(emptied.ticket.id);
    expect(await checksum('SELECT * FROM customers')).toBe(before.customers);
    expect(await checksum('SELECT * FROM orders')).toBe(before.orders);
  });

  it('above the copy limit there is no way back, and the impact says so before approval', async () => {
    const emptied = await approveAndRun('TRUNCATE archive', { recovery: { ...DEFAULT_RECOVERY, maxCopyBytes: 1 } });
    expect(emptied.impact.recovery).toEqual([expect.objectContaining({ way: 'none', targets: ['public.archive'] })]);
    expect(emptied.impact.recovery?.[0]?.summary).toMatch(
      /^No way back: a copy of public\.archive would take .* above the 1 bytes limit/,
    );
    expect(await db.withSession((s) => listEntries(s, { ticket: emptied.ticket.id }))).toEqual([]);
    await expect(proposeUndo(db, store, emptied.ticket.id, request)).rejects.toThrow(
      /has no way back: a copy of public\.archive would take/,
    );
  });

  it('says before approval when there is no way back: a column of a table without a primary key, a partition, DROP SCHEMA', async () => {
    await execSql(
      scratch.url,
      `CREATE TABLE loose (a int, b text); INSERT INTO loose VALUES (1, 'x');
      CREATE TABLE measures (at date NOT NULL, v int) PARTITION BY RANGE (at);
      CREATE TABLE measures_2026 PARTITION OF measures FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
      CREATE SCHEMA scratchpad2;`,
    );
    const impactOf = async (sql: string) => {
      const outcome = await runSql(db, store, { ...request, sql });
      if (outcome.status !== 'held') throw new Error(`expected held, got ${outcome.status}`);
      return outcome.impact.recovery;
    };
    expect(await impactOf('ALTER TABLE loose DROP COLUMN b')).toEqual([
      expect.objectContaining({
        way: 'none',
        summary: 'No way back: public.loose has no primary key to key the copy of b by.',
      }),
    ]);
    expect(await impactOf('DROP TABLE measures_2026')).toEqual([
      expect.objectContaining({
        way: 'none',
        summary:
          'No way back: public.measures_2026 is a partition, partitioned or inherited table, which pg-agent does not quarantine.',
      }),
    ]);
    expect((await impactOf('DROP SCHEMA scratchpad2'))?.[0]?.summary).toBe(
      'No way back: DROP SCHEMA has no recovery in pg-agent (only DROP TABLE, DROP COLUMN and TRUNCATE have one).',
    );
  });

  it('purge is a held write: the quarantined table stays until a person approves dropping it', async () => {
    await execSql(scratch.url, 'CREATE TABLE scratchpad (id int PRIMARY KEY); INSERT INTO scratchpad VALUES (1)');
    const dropped = await approveAndRun('DROP TABLE scratchpad');
    const [entry] = await db.withSession((s) => listEntries(s, { ticket: dropped.ticket.id }));
    await expect(proposePurge(db, store, {}, request)).rejects.toThrow(/Nothing in the quarantine has expired/);
    const purge = await proposePurge(db, store, { ids: [entry?.id ?? ''] }, request);
    expect(purge.sql).toContain(`DROP SCHEMA IF EXISTS "${entry?.id}" CASCADE;`);
    expect(purge.impact.recovery ?? []).toEqual([]);
    expect(await checksum(`SELECT * FROM "${entry?.id}".scratchpad`)).not.toBeNull();
    await store.decide(purge.ticket.id, { approve: true, by: 'reviewer' });
    await exec(purge.ticket.id);
    expect(
      await one<{ n: number }>(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = '${entry?.id}'`),
    ).toEqual({ n: 0 });
    expect(await db.withSession((s) => listEntries(s, { ticket: dropped.ticket.id }))).toEqual([]);
  });
});

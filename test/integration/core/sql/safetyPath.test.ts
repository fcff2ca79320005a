import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { sqlHash } from '../../../../src/core/approvals/ticket';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { AgentError } from '../../../../src/core/platform/errors';
import { silentLogger } from '../../../../src/core/platform/logger';
import { classifySql } from '../../../../src/core/sql/classify';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import { analyzeImpact } from '../../../../src/core/sql/impact';
import { loadParser } from '../../../../src/core/sql/parse';
import { runRead } from '../../../../src/core/sql/runRead';
import { runSql } from '../../../../src/core/sql/runSql';
import type { SafetySettings } from '../../../../src/core/sql/safetySettings';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { validateSql } from '../../../../src/core/sql/validate';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { SHOP_DATA_FINGERPRINT, SHOP_FINGERPRINT, SHOP_SCHEMA } from '../../../support/shopSchema';
import { useSchemaDatabase } from '../../../support/shopDatabase';

const settings: SafetySettings = { ...DEFAULT_SAFETY };
const CONNECTION = 'test-connection';
/** How the tests execute a ticket: on this database, undo scripts into the test's folder. */
const exec = (undoDir: string, ticketId: string, connection = CONNECTION) => ({
  ...settings,
  connection,
  by: 'tester',
  undo: workspaceUndoSink(undoDir, ticketId),
  logger: silentLogger,
});

describe.runIf(postgresAvailable)('impact, approval and execution on PostgreSQL', () => {
  const database = useSchemaDatabase(SHOP_SCHEMA);
  beforeAll(() => loadParser());
  let dir: string;
  let store: FileTicketStore;

  const count = async (sql: string) =>
    Number((await database.db.query<{ n: string }>(`SELECT (${sql})::text AS n`)).rows[0]?.n);
  const fingerprint = async () => (await database.db.query<{ fp: string }>(SHOP_FINGERPRINT)).rows[0]?.fp;
  const dataFingerprint = async () => (await database.db.query<{ fp: string }>(SHOP_DATA_FINGERPRINT)).rows[0]?.fp;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pgagent-tickets-'));
    store = new FileTicketStore(dir, { logger: silentLogger });
  });

  it('measures the exact impact of a delete, with its cascade and trigger, and changes nothing', async () => {
    const before = await fingerprint();
    const sql = 'DELETE FROM orders WHERE id <= 10';
    const expectedItems = await count('SELECT count(*) FROM order_items WHERE order_id <= 10');
    const impact = await analyzeImpact(database.db, classifySql(sql), settings);
    expect(impact.tables).toEqual([
      { schema: 'public', name: 'orders', via: 'direct', inserted: 0, updated: 0, deleted: 10 },
      { schema: 'public', name: 'order_items', via: 'cascade', inserted: 0, updated: 0, deleted: expectedItems },
      { schema: 'public', name: 'audit_log', via: 'trigger', inserted: 10, updated: 0, deleted: 0 },
    ]);
    expect(impact.exactRows).toBe(10 + expectedItems + 10);
    expect(impact.estimatedRows).not.toBeNull();
    expect(impact.foreignKeyActions).toEqual([
      {
        constraint: 'order_items_order_id_fkey',
        table: 'public.order_items',
        references: 'public.orders',
        action: 'ON DELETE CASCADE',
      },
    ]);
    expect(impact.triggers).toEqual([{ table: 'public.orders', name: 'orders_audit' }]);
    expect(impact.risk).toBe((impact.exactRows ?? 0) > 100 ? 'HIGH' : 'MEDIUM');
    expect(impact.requiresApproval).toBe(true);
    expect(impact.wouldFail).toBeNull();
    expect(await fingerprint()).toBe(before);
  });

  it('predicts a failure with the SQLSTATE instead of running it', async () => {
    const impact = await analyzeImpact(database.db, classifySql('DELETE FROM customers WHERE id = 1'), settings);
    // ON DELETE RESTRICT reports 23001 on PostgreSQL 16+ and 23503 before.
    expect(['23001', '23503']).toContain(impact.wouldFail?.code);
    expect(impact.exactRows).toBeNull();
  });

  it('stops a slow preview at its time limit and reports it as would-fail', async () => {
    const impact = await analyzeImpact(
      database.db,
      classifySql('UPDATE orders SET total = total WHERE id IN (SELECT 1 FROM pg_sleep(2))'),
      {
        ...settings,
        previewTimeoutMs: 100,
      },
    );
    expect(impact.wouldFail?.code).toBe('57014');
    expect(impact.warnings.join(' ')).toContain('time limit');
  });

  it('rates an UPDATE without WHERE at least HIGH and DROP as CRITICAL', async () => {
    expect((await analyzeImpact(database.db, classifySql(`UPDATE products SET name = name`), settings)).risk).toBe(
      'HIGH',
    );
    expect((await analyzeImpact(database.db, classifySql('DROP TABLE audit_log'), settings)).risk).toBe('CRITICAL');
    expect(await count('SELECT count(*) FROM audit_log')).toBeGreaterThanOrEqual(0);
  });

  it('runs a read read-only with a row cap, and holds a "read" whose function writes (its reach), running nothing', async () => {
    const read = await runSql(database.db, store, {
      sql: 'SELECT id, total, created_at FROM orders ORDER BY id',
      connection: CONNECTION,
      requestedBy: 't',
      settings: { ...settings, maxRows: 5 },
    });
    expect(read.status).toBe('executed');
    if (read.status !== 'executed') return;
    expect(read.result.rowCount).toBe(5);
    expect(read.result.truncated).toBe(true);
    expect(read.result.fields.map((f) => f.type)).toEqual(['integer', 'numeric', 'timestamp with time zone']);
    expect(read.result.rows[0]).toEqual([1, '7.00', '2024-01-02 00:00:00+00']);

    const before = await fingerprint();
    const sneaky = await runSql(database.db, store, {
      sql: 'SELECT sneaky_write()',
      connection: CONNECTION,
      requestedBy: 't',
      settings,
    });
    expect(sneaky.status).toBe('held');
    expect(sneaky.classification.reasons.join('\n')).toMatch(/sneaky_write\(\) runs INSERT INTO audit_log/);
    expect(await fingerprint()).toBe(before);
    // The guard inside the read path refuses it too, whoever calls it directly.
    await expect(runRead(database.db, 'SELECT sneaky_write()', true, settings)).rejects.toMatchObject({
      code: 'SQL_REFUSED',
    });
    expect(await fingerprint()).toBe(before);
  });

  it('holds a write with a ticket; approved, it runs once, and its undo script puts every row back', async () => {
    const before = await fingerprint();
    const dataBefore = await dataFingerprint();
    const sql = "DELETE FROM orders WHERE status = 'cancelled' AND id <= 50";
    const held = await runSql(database.db, store, { sql, connection: CONNECTION, requestedBy: 'tester', settings });
    expect(held.status).toBe('held');
    if (held.status !== 'held') return;
    expect(await fingerprint()).toBe(before);
    await store.decide(held.ticket.id, { approve: true, by: 'reviewer', comment: 'ok' });

    const result = await executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id));
    expect(await readFile(result.undoFile, 'utf8')).toContain(result.undo.sql);
    expect(result.rows).toBe(held.impact.exactRows);
    expect(result.ticket.status).toBe('EXECUTED');
    expect(await count(`SELECT count(*) FROM orders WHERE status = 'cancelled' AND id <= 50`)).toBe(0);

    // Single use: the same ticket cannot run twice.
    await expect(executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id))).rejects.toMatchObject({
      code: 'APPROVAL_ALREADY_USED',
    });

    // The undo goes through the same path: held, approved, executed.
    const undo = await runSql(database.db, store, {
      sql: result.undo.sql,
      connection: CONNECTION,
      requestedBy: 'tester',
      settings,
    });
    expect(undo.status).toBe('held');
    if (undo.status !== 'held') return;
    await store.decide(undo.ticket.id, { approve: true, by: 'reviewer' });
    await executeApproved(database.db, store, undo.ticket.id, exec(dir, undo.ticket.id));
    // Every order and item is back exactly (the audit log records the undo as new events).
    expect(await dataFingerprint()).toBe(dataBefore);
  });

  it("runs only the ticket's own SQL: SQL edited inside the stored ticket is refused, as is another database", async () => {
    const sql = 'UPDATE products SET price = price + 1 WHERE id = 1';
    const held = await runSql(database.db, store, { sql, connection: CONNECTION, requestedBy: 'tester', settings });
    if (held.status !== 'held') throw new Error('expected held');
    await store.decide(held.ticket.id, { approve: true, by: 'reviewer' });
    const before = await fingerprint();
    await expect(
      executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id, 'another-db')),
    ).rejects.toMatchObject({ code: 'APPROVAL_CONNECTION_MISMATCH' });
    // Someone with access to the ticket files edits the SQL after approval: it does not add up any more.
    const file = join(dir, `${held.ticket.id}.json`);
    const original = await readFile(file, 'utf8');
    const stored = JSON.parse(original) as { sql: string; sqlHash: string };
    await writeFile(file, JSON.stringify({ ...stored, sql: 'UPDATE products SET price = price + 1000 WHERE id = 1' }));
    await expect(executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id))).rejects.toMatchObject({
      code: 'APPROVAL_SQL_MISMATCH',
    });
    // ... and with its hash rewritten to match, the approval (given on the old hash) approves nothing.
    await writeFile(
      file,
      JSON.stringify({
        ...stored,
        sql: 'UPDATE products SET price = price + 1000 WHERE id = 1',
        sqlHash: sqlHash('UPDATE products SET price = price + 1000 WHERE id = 1'),
      }),
    );
    await expect(executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id))).rejects.toMatchObject({
      code: 'APPROVAL_SQL_MISMATCH',
    });
    expect(await fingerprint()).toBe(before);
    expect((await store.get(held.ticket.id))?.status).toBe('APPROVED');
    // Put back as approved, it runs, once.
    await writeFile(file, original);
    expect((await executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id))).rows).toBe(1);
  });

  it('rolls back when the data changed since the review and more rows would change', async () => {
    const sql = 'DELETE FROM order_items WHERE quantity = 3 AND product_id = 2';
    const held = await runSql(database.db, store, { sql, connection: CONNECTION, requestedBy: 'tester', settings });
    if (held.status !== 'held') throw new Error('expected held');
    await store.decide(held.ticket.id, { approve: true, by: 'reviewer' });
    await execSql(
      database.scratch.url,
      `INSERT INTO order_items (order_id, product_id, quantity) SELECT 100, 2, 3 FROM generate_series(1, 10)`,
    );
    const before = await fingerprint();
    const error = await executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('IMPACT_EXCEEDED');
    expect(await fingerprint()).toBe(before);
    expect((await store.get(held.ticket.id))?.status).toBe('FAILED');
  });

  it('runs an approved write that could not be previewed: there were no counts to exceed', async () => {
    // nextval's effect survives a rollback, so the write is not previewed: approved as "not measured".
    const sql = "UPDATE products SET price = price + 1 WHERE id <= 3 AND nextval('order_seq') > 0";
    const held = await runSql(database.db, store, { sql, connection: CONNECTION, requestedBy: 'tester', settings });
    if (held.status !== 'held') throw new Error('expected held');
    expect(held.ticket.impact).toMatchObject({ previewed: false, exactRows: null, tables: [] });
    const prices = 'SELECT sum(price) FROM products WHERE id <= 3';
    const before = await count(prices);
    await store.decide(held.ticket.id, { approve: true, by: 'reviewer' });
    const done = await executeApproved(database.db, store, held.ticket.id, exec(dir, held.ticket.id));
    expect(done.tables).toEqual([
      { schema: 'public', name: 'products', via: 'direct', inserted: 0, updated: 3, deleted: 0 },
    ]);
    expect(await count(prices)).toBe(before + 3);
    expect((await store.get(held.ticket.id))?.status).toBe('EXECUTED');
  });

  it('runs a write at once only when the policy allows its risk and the request allows a policy', async () => {
    const policy = { ...settings, policy: { ...settings.policy, autoApproveMaxRisk: 'MEDIUM' as const } };
    const small = 'DELETE FROM order_items WHERE id = 7';
    /** As a person at pg-agent sql asks it: auto-approval allowed, an undo script written. */
    const byPerson = (sql: string) =>
      runSql(database.db, store, {
        sql,
        connection: CONNECTION,
        requestedBy: 'tester',
        settings: policy,
        autoApprove: true,
        undoDir: dir,
      });
    const auto = await byPerson(small);
    expect(auto.status).toBe('written');
    if (auto.status !== 'written') return;
    expect(auto.ticket.status).toBe('EXECUTED');
    expect(auto.ticket.history.map((h) => `${h.action}:${h.by}`)).toContain(
      'approved:policy (autoApproveMaxRisk=MEDIUM)',
    );
    expect(await count('SELECT count(*) FROM order_items WHERE id = 7')).toBe(0);

    // The same kind of write from the agent (no autoApprove), a HIGH one, and DDL all still wait for a person.
    const fromAgent = await runSql(database.db, store, {
      sql: 'DELETE FROM order_items WHERE id = 8',
      connection: CONNECTION,
      requestedBy: 'agent',
      settings: policy,
    });
    expect(fromAgent.status).toBe('held');
    const high = await byPerson('UPDATE products SET name = name');
    expect(high.status).toBe('held');
    const ddl = await byPerson('CREATE INDEX ON order_items (quantity)');
    expect(ddl.status).toBe('held');
    expect(await count('SELECT count(*) FROM order_items WHERE id = 8')).toBe(1);
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
});

describe.runIf(postgresAvailable)('a server that reads SQL text differently', () => {
  it('cannot smuggle a DELETE past the parser with standard_conforming_strings off by default', async () => {
    await loadParser();
    const scratch = await createScratchDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'pgagent-scs-'));
    try {
      await execSql(
        scratch.url,
        `${SHOP_SCHEMA}; ALTER DATABASE ${scratch.name} SET standard_conforming_strings = off`,
      );
      const db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
      try {
        const attack = "SELECT '\\', $$'; DELETE FROM order_items; --$$";
        expect(classifySql(attack).decision).toBe('run');
        const outcome = await runSql(db, new FileTicketStore(dir, { logger: silentLogger }), {
          sql: attack,
          connection: 'x',
          requestedBy: 't',
          settings,
        });
        expect(outcome.status).toBe('executed');
        expect((await db.query<{ n: string }>('SELECT count(*)::text AS n FROM order_items')).rows[0]?.n).toBe('500');
        expect(
          (await db.query<{ s: string }>("SELECT current_setting('standard_conforming_strings') AS s")).rows[0]?.s,
        ).toBe('on');
      } finally {
        await db.close();
      }
    } finally {
      await scratch.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(postgresAvailable)('validation without running anything', () => {
  const database = useSchemaDatabase(SHOP_SCHEMA);
  beforeAll(() => loadParser());

  it('accepts valid reads and writes, and runs none of them', async () => {
    const sql = 'SELECT count(*) FROM orders; DELETE FROM order_items WHERE id = 1';
    expect(await validateSql(database.db, classifySql(sql), 5000)).toEqual({ ok: true });
    expect(
      (await database.db.query<{ n: string }>('SELECT count(*)::text AS n FROM order_items WHERE id = 1')).rows[0]?.n,
    ).toBe('1');
  });

  it.each([
    ['SELECT nope FROM orders', '42703', 7],
    ['SELECT 1;\nUPDATE ordrs SET total = 0', '42P01', 17],
    ["SELECT * FROM orders WHERE created_at > 'yesterday-ish'", '22007', 40],
  ])('reports %s with its SQLSTATE and the position in the input', async (sql, sqlState, position) => {
    const result = await validateSql(database.db, classifySql(sql), 5000);
    expect(result).toMatchObject({ ok: false, error: { sqlState, position } });
  });
});

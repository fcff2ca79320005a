// The safety path on the embedded sample database (PGlite): the same impact, approval, execution and
// undo as on a server, proving the two are interchangeable behind the Db interface.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import type { Db } from '../../../../src/core/db/db';
import { openSampleDb } from '../../../../src/core/db/sample/openSampleDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import { loadParser } from '../../../../src/core/sql/parse';
import { runSql } from '../../../../src/core/sql/runSql';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';

describe('the safety path on the sample database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgagent-sample-safety-'));
  const undoDir = join(dir, 'undo');
  let db: Db;
  let store: FileTicketStore;
  const request = (sql: string) => ({ sql, connection: 'sample', requestedBy: 'tester', settings: DEFAULT_SAFETY });
  const fingerprint = async () =>
    (
      await db.query<{ fp: string }>(`SELECT md5(string_agg(t, '|' ORDER BY t)) AS fp FROM (
      SELECT 'o' || o::text AS t FROM orders o UNION ALL SELECT 'i' || i::text FROM order_items i
      UNION ALL SELECT 'p' || p::text FROM payments p UNION ALL SELECT 's' || s::text FROM shipments s) x`)
    ).rows[0]?.fp;

  beforeAll(async () => {
    await loadParser();
    db = await openSampleDb({ dataDir: join(dir, 'sample-db'), logger: silentLogger });
    store = new FileTicketStore(join(dir, 'approvals'), { logger: silentLogger });
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads with PostgreSQL text values kept exact', async () => {
    const outcome = await runSql(db, store, request('SELECT id, total, created_at FROM orders ORDER BY id LIMIT 2'));
    expect(outcome.status).toBe('executed');
    if (outcome.status !== 'executed') return;
    expect(outcome.result.fields.map((f) => f.type)).toEqual(['bigint', 'numeric', 'timestamp with time zone']);
    expect(typeof outcome.result.rows[0]?.[0]).toBe('string');
    expect(outcome.result.rows[0]?.[1]).toMatch(/^\d+\.\d{2}$/);
  });

  it('previews a delete with its cascades and audit trigger, runs it once approved, and undoes it', async () => {
    const before = await fingerprint();
    const sql = 'DELETE FROM orders WHERE id IN (1, 2, 3)';
    const held = await runSql(db, store, request(sql));
    if (held.status !== 'held') throw new Error(`expected held, got ${held.status}`);
    const vias = new Map(held.impact.tables.map((t) => [t.name, t.via]));
    expect(vias.get('orders')).toBe('direct');
    expect(vias.get('order_items')).toBe('cascade');
    expect(vias.get('audit_log')).toBe('trigger');
    expect(held.impact.tables.find((t) => t.name === 'orders')?.deleted).toBe(3);
    expect(await fingerprint()).toBe(before);

    await store.decide(held.ticket.id, { approve: true, by: 'reviewer' });
    const done = await executeApproved(db, store, held.ticket.id, {
      ...DEFAULT_SAFETY,
      connection: 'sample',
      by: 'reviewer',
      undo: workspaceUndoSink(undoDir, held.ticket.id),
      logger: silentLogger,
    });
    expect(done.rows).toBe(held.impact.exactRows);
    expect(
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE id IN (1, 2, 3)')).rows[0]?.n,
    ).toBe(0);

    const undo = await runSql(db, store, request(done.undo.sql));
    if (undo.status !== 'held') throw new Error('expected the undo to be held');
    await store.decide(undo.ticket.id, { approve: true, by: 'reviewer' });
    await executeApproved(db, store, undo.ticket.id, {
      ...DEFAULT_SAFETY,
      connection: 'sample',
      by: 'reviewer',
      undo: workspaceUndoSink(undoDir, undo.ticket.id),
      logger: silentLogger,
    });
    expect(await fingerprint()).toBe(before);
  });
});

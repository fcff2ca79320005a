/**
 * Edit in the results grid on a real PostgreSQL (issue 33): a read's rows → edits → ONE held write with its exact
 * impact (cascade, trigger) → approved → executed once; hostile values land exactly as typed; a row changed since
 * it was read is left alone (the preview shows it, and so does the execution); nothing runs without a ticket.
 * Also the diagram's graph from the real catalog.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decideTicket } from '../../../../src/core/approvals/approvalPath';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { introspectSchema } from '../../../../src/core/db/introspect';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { neighbourhoodGraph, schemaGraph } from '../../../../src/core/db/schemaGraph';
import { silentLogger } from '../../../../src/core/platform/logger';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import type { EditTarget } from '../../../../src/core/sql/gridEdits';
import { buildGridEdits } from '../../../../src/core/sql/gridEdits';
import { gridEditTarget } from '../../../../src/core/sql/gridEditTarget';
import { loadParser } from '../../../../src/core/sql/parse';
import { runSql } from '../../../../src/core/sql/runSql';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';
import { conflictText } from '../../../../src/host/schema/gridEditing';
import type { GridEdit } from '../../../../src/shared/gridEditProtocol';
import { runPgAgent } from '../../../support/cliHarness';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const SCHEMA = `
CREATE TABLE items (
  id integer PRIMARY KEY,
  label text,
  price numeric(10,2),
  doc jsonb,
  tags text[],
  raw bytea,
  "left" boolean
);
CREATE TABLE item_notes (id serial PRIMARY KEY, item_id integer NOT NULL REFERENCES items(id) ON DELETE CASCADE, note text);
CREATE TABLE item_audit (id serial PRIMARY KEY, item_id integer, what text);
CREATE FUNCTION audit_item() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO item_audit (item_id, what) VALUES (COALESCE(NEW.id, OLD.id), TG_OP);
  RETURN COALESCE(NEW, OLD);
END $$;
CREATE TRIGGER items_audit AFTER INSERT OR UPDATE OR DELETE ON items FOR EACH ROW EXECUTE FUNCTION audit_item();
INSERT INTO items VALUES
  (1, 'plain', 9.99, '{"a": 1}', '{x,"y z"}', '\\x0102', true),
  (2, 'to delete', 1.00, null, null, null, false),
  (3, 'someone else edits me', 5.00, null, null, null, null);
INSERT INTO item_notes (item_id, note) VALUES (2, 'a'), (2, 'b');
`;
const READ = 'SELECT * FROM public.items ORDER BY id';

describe.runIf(postgresAvailable)('grid edits through approval on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let dir: string;
  let store: FileTicketStore;

  const read = async () => {
    const outcome = await runSql(db, store, {
      sql: READ,
      connection: 'c',
      requestedBy: 'tester',
      settings: DEFAULT_SAFETY,
    });
    if (outcome.status !== 'executed') throw new Error(`the read was ${outcome.status}`);
    return outcome.result;
  };
  const targetOf = async (fields: { name: string }[]): Promise<EditTarget> => {
    const found = gridEditTarget(READ, await db.withSession((s) => introspectSchema(s)), fields);
    if (!found.ok) throw new Error(found.reason);
    return found.target;
  };
  const hold = async (sql: string) => {
    const outcome = await runSql(db, store, { sql, connection: 'c', requestedBy: 'tester', settings: DEFAULT_SAFETY });
    if (outcome.status !== 'held') throw new Error(`the write was ${outcome.status}`);
    return outcome;
  };
  const execute = (ticketId: string) =>
    executeApproved(db, store, ticketId, {
      ...DEFAULT_SAFETY,
      connection: 'c',
      by: 'tester',
      undo: workspaceUndoSink(join(dir, 'undo'), ticketId),
      logger: silentLogger,
    });
  const rowsOf = async (sql: string) => (await db.query(sql)).rows;

  beforeAll(async () => {
    await loadParser();
    scratch = await createScratchDatabase('i33a_grid');
    await execSql(scratch.url, SCHEMA);
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'i33a-grid-'));
    store = new FileTicketStore(join(dir, 'approvals'), { logger: silentLogger });
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the edits as one write with their cascade and trigger; approved, it writes the values exactly as typed', async () => {
    const result = await read();
    const target = await targetOf(result.fields);
    const col = (name: string) => target.columns.findIndex((c) => c?.name === name);
    const hostile = "O'Brien \\ 日本 🐘 '; DROP TABLE items; --";
    const edits: GridEdit[] = [
      {
        kind: 'update',
        row: 0,
        cells: [
          { column: col('label'), value: { text: hostile } },
          { column: col('price'), value: { text: '12345678.91' } },
          { column: col('doc'), value: { text: '{"b": "it\'s \\\\ ok"}' } },
          { column: col('tags'), value: { text: '{"NULL",NULL,"q\\"x"}' } },
          { column: col('raw'), value: { text: '\\xdeadbeef00' } },
          { column: col('left'), value: { null: true } },
        ],
      },
      { kind: 'delete', row: 1 },
      {
        kind: 'insert',
        cells: [
          { column: col('id'), value: { text: '4' } },
          { column: col('label'), value: { text: 'NULL' } },
        ],
      },
    ];
    const built = buildGridEdits(target, result.rows, edits);
    const before = await rowsOf('SELECT * FROM items ORDER BY id');
    const held = await hold(built.sql);
    expect(held.impact.tables).toEqual(
      expect.arrayContaining([
        { schema: 'public', name: 'items', via: 'direct', inserted: 1, updated: 1, deleted: 1 },
        { schema: 'public', name: 'item_notes', via: 'cascade', inserted: 0, updated: 0, deleted: 2 },
        { schema: 'public', name: 'item_audit', via: 'trigger', inserted: 3, updated: 0, deleted: 0 },
      ]),
    );
    expect(conflictText(held.impact, built)).toBeNull();
    expect(await rowsOf('SELECT * FROM items ORDER BY id')).toEqual(before);

    // No write without an approved ticket.
    await expect(execute(held.ticket.id)).rejects.toThrow();
    expect(await rowsOf('SELECT * FROM items ORDER BY id')).toEqual(before);

    await decideTicket(store, held.ticket.id, { approve: true, by: 'reviewer' });
    const done = await execute(held.ticket.id);
    expect(done.rows).toBe(1 + 1 + 1 + 2 + 3);
    const [one] = await rowsOf(
      `SELECT label, price::text, doc, tags, encode(raw, 'hex') AS raw, "left" FROM items WHERE id = 1`,
    );
    expect(one).toEqual({
      label: hostile,
      price: '12345678.91',
      doc: { b: "it's \\ ok" },
      tags: ['NULL', null, 'q"x'],
      raw: 'deadbeef00',
      left: null,
    });
    expect(await rowsOf('SELECT id, label FROM items WHERE id IN (2, 4) ORDER BY id')).toEqual([
      { id: 4, label: 'NULL' },
    ]);
    expect(await rowsOf('SELECT count(*)::int AS n FROM item_notes')).toEqual([{ n: 0 }]);
    // Approved once, run once.
    await expect(execute(held.ticket.id)).rejects.toThrow();
  });

  it('a row changed since it was read: the preview changes none of it, and a change after approval is left alone', async () => {
    const result = await read();
    const target = await targetOf(result.fields);
    const row = result.rows.findIndex((r) => r[0] === 3);
    const label = target.columns.findIndex((c) => c?.name === 'label');
    const built = buildGridEdits(target, result.rows, [
      { kind: 'update', row, cells: [{ column: label, value: { text: 'mine' } }] },
    ]);

    await db.query(`UPDATE items SET label = 'theirs, before the review' WHERE id = 3`);
    const stale = await hold(built.sql);
    expect(stale.impact.exactRows).toBe(0);
    expect(conflictText(stale.impact, built)).toContain('1 of 1 edited rows changed since they were read');

    await db.query(`UPDATE items SET label = 'someone else edits me' WHERE id = 3`);
    const fresh = await hold(built.sql);
    expect(conflictText(fresh.impact, built)).toBeNull();
    await decideTicket(store, fresh.ticket.id, { approve: true, by: 'reviewer' });
    await db.query(`UPDATE items SET label = 'theirs, after the approval' WHERE id = 3`);
    const done = await execute(fresh.ticket.id);
    expect(done.rows).toBe(0);
    expect(await rowsOf('SELECT label FROM items WHERE id = 3')).toEqual([{ label: 'theirs, after the approval' }]);
  });

  it('draws the real schema: the neighbourhood of items holds its FK child, the schema all three tables', async () => {
    const snapshot = await db.withSession((s) => introspectSchema(s));
    const near = neighbourhoodGraph(snapshot, 'public', 'items', 1);
    expect(near.tables.map((t) => t.name).sort()).toEqual(['item_notes', 'items']);
    expect(near.edges).toEqual([
      expect.objectContaining({ from: 'public.item_notes', to: 'public.items', onDelete: 'CASCADE' }),
    ]);
    expect(near.tables.find((t) => t.name === 'items')?.columns.find((c) => c.name === 'id')).toMatchObject({
      pk: true,
    });
    expect(schemaGraph(snapshot, 'public').tables).toHaveLength(3);
  });

  it('pg-agent schema --diagram mermaid prints the neighbourhood as an ER diagram; bad flags exit 2', async () => {
    const run = await runPgAgent(['schema', '--db', scratch.url, '--diagram', 'mermaid', '--table', 'items'], {
      cwd: dir,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^erDiagram\n/);
    expect(run.stdout).toContain('public__item_notes }o--|| public__items : "item_notes_item_id_fkey"');
    expect(run.stdout).toContain('integer id PK');
    expect(run.stdout).not.toContain('item_audit');
    const whole = await runPgAgent(['schema', '--db', scratch.url, '--diagram', 'mermaid'], { cwd: dir });
    expect(whole.stdout).toContain('public__item_audit {');
    const bad = await runPgAgent(['schema', '--db', scratch.url, '--diagram', 'svg'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--diagram takes "mermaid"');
    const depth = await runPgAgent(['schema', '--db', scratch.url, '--diagram', 'mermaid', '--depth', '3'], {
      cwd: dir,
    });
    expect(depth.code).toBe(2);
  });
});

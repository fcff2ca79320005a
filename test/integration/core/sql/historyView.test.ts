/**
 * The History view's data source on a real PostgreSQL (issue 33): statements run through the safety path land in
 * `.pgagent/history/`, and the view reads only the end of each file (a big history is not read whole; an unchanged
 * file is not read again), newest first per database, searched; "Run again" of a write goes through runSql to a NEW
 * held ticket and changes nothing in the database until approved; a read runs read-only; a statement whose text
 * the history cut is refused.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideTicket } from '../../../../src/core/approvals/approvalPath';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { parseConnectionUrl } from '../../../../src/core/db/connectionTarget';
import type { Db } from '../../../../src/core/db/db';
import { openPostgres } from '../../../../src/core/db/postgresDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import type { HistoryEntry } from '../../../../src/core/sql/history/historyEntry';
import { historyDatabaseKey, historyFileName, historyLine } from '../../../../src/core/sql/history/historyEntry';
import { HistoryLog } from '../../../../src/core/sql/history/historyLog';
import { HistoryTail } from '../../../../src/core/sql/history/historyTail';
import { queryHistory } from '../../../../src/core/sql/history/queryHistory';
import { runAgainOf } from '../../../../src/core/sql/history/runAgain';
import { loadParser } from '../../../../src/core/sql/parse';
import { runSql } from '../../../../src/core/sql/runSql';
import type { SafetySettings } from '../../../../src/core/sql/safetySettings';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { queryValue } from '../../../support/scratchDatabase';

const READ = 'SELECT id, qty FROM i33h_items WHERE id <= 2 ORDER BY id';
const WRITE = 'UPDATE i33h_items SET qty = qty + 1 WHERE id = 1';

function entry(db: string, i: number, extra: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    db,
    origin: 'cli',
    who: 'tester',
    kind: 'read',
    sql: `SELECT ${i} AS n /* ${i % 7 === 0 ? 'seventh' : 'plain'} padding ${'x'.repeat(120)} */`,
    ms: 1.5,
    rows: 1,
    status: 'ok',
    ...extra,
  };
}

describe.runIf(postgresAvailable)('the History view data source on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let dir: string;
  let historyDir: string;
  let store: FileTicketStore;
  let log: HistoryLog;
  let settings: SafetySettings;

  beforeAll(async () => {
    await loadParser();
    scratch = await createScratchDatabase('i33h_histview');
    await execSql(
      scratch.url,
      'CREATE TABLE i33h_items (id int PRIMARY KEY, qty int NOT NULL); INSERT INTO i33h_items VALUES (1, 10), (2, 20), (3, 30)',
    );
    db = await openPostgres(parseConnectionUrl(scratch.url), { logger: silentLogger });
    dir = mkdtempSync(join(tmpdir(), 'i33h-histview-'));
    historyDir = join(dir, 'history');
    store = new FileTicketStore(join(dir, 'approvals'), { logger: silentLogger });
    log = new HistoryLog(historyDir, { delayMs: 5 });
    settings = { ...DEFAULT_SAFETY, history: queryHistory(log, 'vscode', 'tester') };
  });

  afterAll(async () => {
    log?.close();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // DROP DATABASE waits for a checkpoint, which takes minutes while others load the shared server.
    await scratch?.drop();
  }, 600_000);

  const run = (sql: string) => runSql(db, store, { sql, connection: 'c', requestedBy: 'tester', settings });

  it('records a read and an approved write, and shows them newest first with the write’s ticket', async () => {
    const read = await run(READ);
    expect(read.status).toBe('executed');
    const held = await run(WRITE);
    if (held.status !== 'held') throw new Error(`the write was ${held.status}`);
    await decideTicket(store, held.ticket.id, { approve: true, by: 'reviewer' });
    await executeApproved(db, store, held.ticket.id, {
      ...settings,
      connection: 'c',
      by: 'tester',
      undo: workspaceUndoSink(join(dir, 'undo'), held.ticket.id),
      logger: silentLogger,
    });
    expect(await queryValue(scratch.url, 'SELECT qty FROM i33h_items WHERE id = 1')).toBe(11);
    log.flush();

    const tail = new HistoryTail(historyDir);
    const [database, ...others] = await tail.read();
    expect(others).toEqual([]);
    expect(database?.db).toBe(historyDatabaseKey(db.label));
    expect(database?.entries.map((e) => [e.kind, e.sql, e.rows, e.origin])).toEqual([
      ['write', WRITE, 1, 'vscode'],
      ['read', READ, 2, 'vscode'],
    ]);
    expect(database?.entries[0]?.ticket).toBe(held.ticket.id);
    expect(database?.more).toBe(false);
    // Nothing changed: nothing is read again.
    await tail.read();
    expect(tail.lastBytesRead).toBe(0);
  });

  it('reads only the end of a big file, and a change only once', async () => {
    const big = join(dir, 'big');
    mkdirSync(big);
    const key = '10.0.0.9:5432/big';
    const file = join(big, historyFileName(key));
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) lines.push(historyLine(entry(key, i)));
    writeFileSync(file, lines.join(''));
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(6 * 1024 * 1024);

    const tail = new HistoryTail(big, { tailBytes: 256 * 1024, perDatabase: 50 });
    const [database] = await tail.read();
    expect(tail.lastBytesRead).toBe(256 * 1024);
    expect(database?.entries).toHaveLength(50);
    expect(database?.entries[0]?.sql).toContain('SELECT 29999 AS n');
    expect(database?.entries[49]?.sql).toContain('SELECT 29950 AS n');
    expect(database?.more).toBe(true);
    expect(database?.scanned).toBeLessThan(30_000);

    appendFileSync(file, historyLine(entry(key, 30_000, { sql: 'SELECT 30000 AS newest' })));
    const [after] = await tail.read();
    expect(after?.entries[0]?.sql).toBe('SELECT 30000 AS newest');
    expect(tail.lastBytesRead).toBe(256 * 1024);
  });

  it('reaches into the newest rotated file when the current one is short; searches what it read', async () => {
    const rotated = join(dir, 'rotated');
    mkdirSync(rotated);
    const key = '10.0.0.9:5432/rot';
    const stem = historyFileName(key).slice(0, -'.jsonl'.length);
    const write = (name: string, from: number, to: number) =>
      writeFileSync(
        join(rotated, name),
        Array.from({ length: to - from }, (_, i) => historyLine(entry(key, from + i))).join(''),
      );
    write(`${stem}.1000.1.jsonl`, 0, 20);
    write(`${stem}.2000.1.jsonl`, 20, 40);
    write(`${stem}.jsonl`, 40, 45);
    // Another database's file, and a stray file, in the same folder.
    writeFileSync(join(rotated, historyFileName('sample')), historyLine(entry('sample', 99)));
    writeFileSync(join(rotated, 'notes.txt'), 'not history');

    const tail = new HistoryTail(rotated, { perDatabase: 10 });
    const databases = await tail.read();
    expect(databases.map((d) => d.db)).toEqual(['sample', key]);
    const rot = databases[1];
    expect(rot?.entries.map((e) => e.sql.slice(0, 10))).toEqual(
      [44, 43, 42, 41, 40, 39, 38, 37, 36, 35].map((i) => `SELECT ${i} `.slice(0, 10)),
    );
    // The oldest rotated file was not needed.
    expect(rot?.scanned).toBe(25);
    expect(rot?.more).toBe(true);

    const searched = await tail.read('SEVENTH');
    const found = searched.find((d) => d.db === key);
    expect(found?.entries.map((e) => e.sql.slice(0, 9))).toEqual(['SELECT 42', 'SELECT 35', 'SELECT 28', 'SELECT 21']);
    expect(searched.find((d) => d.db === 'sample')?.entries).toEqual([]);
  });

  it('runs a write again only on a new held ticket: the database is unchanged until it is approved', async () => {
    const tail = new HistoryTail(historyDir);
    const [database] = await tail.read();
    const write = database?.entries.find((e) => e.kind === 'write');
    if (!write) throw new Error('no write in the history');
    const plan = runAgainOf(write, historyDatabaseKey(db.label));
    if (plan.kind !== 'run') throw new Error(plan.reason);
    expect(plan.otherDatabase).toBeUndefined();

    const again = await run(plan.sql);
    if (again.status !== 'held') throw new Error(`run again was ${again.status}`);
    expect(again.ticket.id).not.toBe(write.ticket);
    expect((await store.get(again.ticket.id))?.status).toBe('PENDING_APPROVAL');
    expect(await queryValue(scratch.url, 'SELECT qty FROM i33h_items WHERE id = 1')).toBe(11);

    // The old ticket, spent, cannot run it again.
    await expect(
      executeApproved(db, store, write.ticket ?? '', {
        ...settings,
        connection: 'c',
        by: 'tester',
        undo: workspaceUndoSink(join(dir, 'undo'), write.ticket ?? ''),
        logger: silentLogger,
      }),
    ).rejects.toThrow();
    expect(await queryValue(scratch.url, 'SELECT qty FROM i33h_items WHERE id = 1')).toBe(11);
  });

  it('runs a read again read-only with its rows; refuses a cut statement; names another database', async () => {
    const [database] = await new HistoryTail(historyDir).read();
    const read = database?.entries.find((e) => e.kind === 'read');
    if (!read) throw new Error('no read in the history');
    const plan = runAgainOf(read, historyDatabaseKey(db.label));
    if (plan.kind !== 'run') throw new Error(plan.reason);
    const again = await run(plan.sql);
    if (again.status !== 'executed') throw new Error(`run again was ${again.status}`);
    expect(again.result.rows).toEqual([
      [1, 11],
      [2, 20],
    ]);

    const cut = runAgainOf({ ...read, sqlTruncated: true, ticket: 'tkt_x' }, read.db);
    expect(cut).toEqual({ kind: 'refused', reason: expect.stringContaining('its text is cut') as string });
    expect(runAgainOf({ ...read, sql: '  ' }, read.db).kind).toBe('refused');
    expect(runAgainOf(read, 'elsewhere:5432/other')).toMatchObject({ kind: 'run', otherDatabase: read.db });
  });
});

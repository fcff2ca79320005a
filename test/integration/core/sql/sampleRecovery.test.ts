// Issue 25 on PGlite (the engine of the embedded sample database; one session, no pg_stat_activity of others):
// approved DDL takes its locks ahead and runs, DROP TABLE goes to the quarantine, undo brings the table back.
// A fresh in-memory PGlite, not the generated sample data: the engine is what is tested, in a second.
import { PGlite } from '@electric-sql/pglite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import type { Db } from '../../../../src/core/db/db';
import { PgliteDb } from '../../../../src/core/db/pgliteDb';
import { silentLogger } from '../../../../src/core/platform/logger';
import { executeApproved } from '../../../../src/core/sql/executeApproved';
import { loadParser } from '../../../../src/core/sql/parse';
import { proposeUndo } from '../../../../src/core/sql/undoProposal';
import { runSql } from '../../../../src/core/sql/runSql';
import { DEFAULT_SAFETY } from '../../../../src/core/sql/safetySettings';
import { workspaceUndoSink } from '../../../../src/core/sql/writeArtifacts';

describe("the way back on PGlite, the sample database's engine", () => {
  let dir: string;
  let db: Db;
  let store: FileTicketStore;
  const request = { connection: 'sample', requestedBy: 'tester', settings: DEFAULT_SAFETY };
  const run = async (id: string) => {
    await store.decide(id, { approve: true, by: 'reviewer' });
    return executeApproved(db, store, id, {
      ...DEFAULT_SAFETY,
      connection: 'sample',
      by: 'tester',
      undo: workspaceUndoSink(join(dir, 'undo'), id),
      logger: silentLogger,
    });
  };
  const count = async (sql: string) => Number((await db.query<{ n: number }>(sql)).rows[0]?.n);

  beforeAll(async () => {
    await loadParser();
    dir = mkdtempSync(join(tmpdir(), 'pgagent-sample-recovery-'));
    db = new PgliteDb(await PGlite.create(), 'sample');
    store = new FileTicketStore(join(dir, 'approvals'), { logger: silentLogger });
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drops a table into the quarantine and restores it', async () => {
    await db.query('CREATE TABLE scratch_notes (id int PRIMARY KEY, body text)');
    await db.query("INSERT INTO scratch_notes SELECT g, 'n' || g FROM generate_series(1, 30) g");
    const held = await runSql(db, store, { ...request, sql: 'DROP TABLE scratch_notes' });
    if (held.status !== 'held') throw new Error(held.status);
    expect(held.impact.recovery?.[0]?.way).toBe('quarantine');
    expect(held.impact.lockHolders).toBeUndefined();
    expect((await run(held.ticket.id)).ticket.status).toBe('EXECUTED');
    expect(
      await count(
        "SELECT count(*)::int AS n FROM pg_class WHERE relname = 'scratch_notes' AND relnamespace = 'public'::regnamespace",
      ),
    ).toBe(0);
    const undo = await proposeUndo(db, store, held.ticket.id, request);
    expect((await run(undo.ticket.id)).ticket.status).toBe('EXECUTED');
    expect(await count('SELECT count(*)::int AS n FROM scratch_notes')).toBe(30);
  });
});

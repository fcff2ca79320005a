/**
 * One pending ticket per statement and database, the lookup every surface uses (src/core/sql/pendingTicket.ts): the
 * CLI, MCP, VS Code (same requester) and the guard (any of its clients) find the identical statement's pending ticket
 * instead of making another; a changed impact replaces it; a guard transaction's ticket with the same text is never
 * a single statement's. On a real file store in a temporary folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transactionSql } from '../../../../src/core/approvals/ticket';
import { FileTicketStore } from '../../../../src/core/approvals/fileTicketStore';
import { silentLogger } from '../../../../src/core/platform/logger';
import { liveTicketsOf, pendingOrNewTicket } from '../../../../src/core/sql/pendingTicket';
import type { ImpactReport } from '../../../../src/shared/impactReport';
import { impactReport } from '../../../support/impactReports';

const DB = 'postgres://app@db:5432/shop';
const SQL = 'DELETE FROM orders WHERE id = 7';

function impact(deleted: number): ImpactReport {
  return impactReport({
    statements: [SQL],
    estimatedRows: 1,
    exactRows: deleted,
    tables: [{ schema: 'public', name: 'orders', via: 'direct', inserted: 0, updated: 0, deleted }],
    previewMs: 1,
  });
}

describe('pendingOrNewTicket: one pending ticket per statement and database', () => {
  let dir: string;
  let store: FileTicketStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pgagent-pending-'));
    store = new FileTicketStore(dir, { logger: silentLogger });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the same statement, database and impact: the pending ticket; another database: its own', async () => {
    const first = await pendingOrNewTicket(store, { sql: SQL, connection: DB, impact: impact(1), createdBy: 'ann' });
    const again = await pendingOrNewTicket(store, { sql: SQL, connection: DB, impact: impact(1), createdBy: 'ann' });
    expect(first.reused).toBe(false);
    expect(again).toMatchObject({ reused: true, ticket: { id: first.ticket.id } });
    const elsewhere = await pendingOrNewTicket(store, {
      sql: SQL,
      connection: 'postgres://app@db:5432/other',
      impact: impact(1),
      createdBy: 'ann',
    });
    expect(elsewhere.ticket.id).not.toBe(first.ticket.id);
    expect((await store.list()).filter((t) => t.connection === DB)).toHaveLength(1);
  });

  it('a changed impact: a new ticket, and the pending one rejected as replaced', async () => {
    const first = await pendingOrNewTicket(store, { sql: SQL, connection: DB, impact: impact(1), createdBy: 'ann' });
    const now = await pendingOrNewTicket(store, { sql: SQL, connection: DB, impact: impact(0), createdBy: 'ann' });
    expect(now.reused).toBe(false);
    expect(now.ticket.id).not.toBe(first.ticket.id);
    expect((await store.get(first.ticket.id))?.status).toBe('REJECTED');
    expect((await store.get(first.ticket.id))?.decisions.at(-1)?.comment).toContain(`replaced by ${now.ticket.id}`);
  });

  it("another requester's pending ticket: only the guard (any of its clients) shares it", async () => {
    const ann = await pendingOrNewTicket(store, { sql: SQL, connection: DB, impact: impact(1), createdBy: 'ann' });
    const guard = await pendingOrNewTicket(
      store,
      { sql: SQL, connection: DB, impact: impact(1), createdBy: 'bob via guard' },
      { anyRequester: true },
    );
    expect(guard).toMatchObject({ reused: true, ticket: { id: ann.ticket.id } });
    const bob = await pendingOrNewTicket(store, { sql: SQL, connection: DB, impact: impact(1), createdBy: 'bob' });
    expect(bob.reused).toBe(false);
  });

  it("a guard transaction's ticket with the same text is never the statement's", async () => {
    const statements = [{ sql: SQL, template: 'w:0123', read: false }];
    const transaction = await store.create({
      sql: transactionSql(statements),
      connection: DB,
      impact: impact(1),
      createdBy: 'client',
      origin: 'guardTransaction',
      transaction: {
        statements,
        effects: [{ schema: 'public', name: 'orders', inserted: 0, updated: 0, deleted: 1 }],
      },
      matchKey: 'w:0123',
    });
    // Found by its text's hash or by its match key, it is not a statement's live ticket.
    expect(await liveTicketsOf(store, { connection: DB, sql: transaction.sql })).toEqual([]);
    expect(await liveTicketsOf(store, { connection: DB, sql: transaction.sql, matchKey: 'w:0123' })).toEqual([]);
    const statement = await pendingOrNewTicket(
      store,
      { sql: transaction.sql, connection: DB, impact: impact(1), createdBy: 'client' },
      { anyRequester: true },
    );
    expect(statement.reused).toBe(false);
    expect(statement.ticket.id).not.toBe(transaction.id);
    expect((await store.get(transaction.id))?.status).toBe('PENDING_APPROVAL');
  });
});

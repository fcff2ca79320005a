/**
 * The execution ledger (SPEC §5 6): pgagent.executions in the target database, one row per executed ticket,
 * inserted in the same transaction as the write (before COMMIT). Its primary key is what makes a replay
 * impossible even when a ticket's file or Redis key is reset to APPROVED: the ticket's status is never trusted.
 * A statement that runs outside a transaction gets a row before (running) and after (done or failed).
 */
import type { DbSession } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import { AgentError } from '../platform/errors';
import { SCHEMA_PRESENCE_SQL } from './pgagentSchema';
import type { Ticket } from './ticket';

export type LedgerStatus = 'running' | 'done' | 'failed';

export interface LedgerRow {
  ticketId: string;
  sqlHash: string;
  executedAt: string;
  xid: string | null;
  by: string;
  status: LedgerStatus;
}

export async function ledgerPresent(session: DbSession): Promise<boolean> {
  const result = await session.query<{ ledger: boolean }>(SCHEMA_PRESENCE_SQL);
  return result.rows[0]?.ledger === true;
}

export async function ledgerRow(session: DbSession, ticketId: string): Promise<LedgerRow | undefined> {
  const result = await session.query<{
    ticket_id: string;
    sql_hash: string;
    executed_at: string;
    xid: string | null;
    by: string;
    status: LedgerStatus;
  }>(
    'SELECT ticket_id, sql_hash, executed_at::text AS executed_at, xid, by, status FROM pgagent.executions WHERE ticket_id = $1',
    [ticketId],
  );
  const row = result.rows[0];
  return row
    ? {
        ticketId: row.ticket_id,
        sqlHash: row.sql_hash,
        executedAt: row.executed_at,
        xid: row.xid,
        by: row.by,
        status: row.status,
      }
    : undefined;
}

/**
 * The ledger's refusal. An executor that gets it after claiming a (reset) ticket records nothing on the ticket:
 * the execution that owns the ledger row did run, and the ticket is resolved from that row when next read.
 */
export class LedgerRefusal extends AgentError {}

export function alreadyExecuted(
  ticketId: string,
  row: Pick<LedgerRow, 'executedAt' | 'status'> | undefined,
): AgentError {
  return new LedgerRefusal(
    'APPROVAL_POLICY',
    `Ticket ${ticketId} was already executed on this database${row ? ` (${row.status} at ${row.executedAt})` : ''}: the execution ledger (pgagent.executions) refuses to run it again, whatever the ticket's status says.`,
    'A ticket runs once. To make the same change again, send the SQL again for a new ticket and approval.',
  );
}

/** Refuses, before anything is claimed, a ticket the ledger already holds. */
export async function assertNotInLedger(session: DbSession, ticketId: string): Promise<void> {
  const row = await ledgerRow(session, ticketId);
  if (row) throw alreadyExecuted(ticketId, row);
}

/**
 * Records the execution; in a transaction, it commits or rolls back with the write. A concurrent executor of
 * the same ticket waits on the primary key and then gets the refusal.
 */
export async function recordExecution(
  session: DbSession,
  ticket: Pick<Ticket, 'id' | 'sqlHash'>,
  entry: { xid: string | null; by: string; status: LedgerStatus },
): Promise<void> {
  try {
    await session.query(
      'INSERT INTO pgagent.executions (ticket_id, sql_hash, xid, by, status) VALUES ($1, $2, $3, $4, $5)',
      [ticket.id, ticket.sqlHash, entry.xid, entry.by, entry.status],
    );
  } catch (error) {
    if (error instanceof DbQueryError && error.sqlState === '23505') throw alreadyExecuted(ticket.id, undefined);
    throw error;
  }
}

/** Outside a transaction: the running row becomes done or failed. */
export async function finishLedgerRow(session: DbSession, ticketId: string, status: 'done' | 'failed'): Promise<void> {
  await session.query("UPDATE pgagent.executions SET status = $2 WHERE ticket_id = $1 AND status = 'running'", [
    ticketId,
    status,
  ]);
}

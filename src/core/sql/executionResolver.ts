/**
 * The one way a ticket left EXECUTING is resolved (SPEC §5.6): ask the ticket's own database what became
 * of the transaction recorded on it, from the execution ledger when the database keeps one, else with
 * pg_xact_status(); and when it did not commit, void the undo
 * script that was written before COMMIT, where this machine can reach it.
 */
import type { Db } from '../db/db';
import type { Logger } from '../platform/logger';
import { voidUndoFile } from './writeArtifacts';
import { ledgerPresent, ledgerRow } from '../approvals/executionLedger';
import type { Ticket } from '../approvals/ticket';
import { OUTSIDE_TRANSACTION_XID } from '../approvals/ticket';
import type { ExecutionResolver, XactStatus } from '../approvals/ticketStore';

/** Reads the fate of transaction `xid` (cluster-wide ids, so any database of the cluster can answer). */
export async function xactStatus(db: Db, xid: string): Promise<XactStatus | undefined> {
  return db.withSession(async (session) => {
    let status: string | null | undefined;
    try {
      const result = await session.query<{ status: string | null }>('SELECT pg_xact_status($1::text::xid8) AS status', [
        xid,
      ]);
      status = result.rows[0]?.status;
    } catch (error) {
      // An id beyond the server's next one was never committed: the server crashed before it reached the WAL
      // (and a commit always does). Ids claimed now are made durable first (durableXid.ts): none is reused.
      if (/is in the future/.test(String(error))) return 'aborted';
      throw error;
    }
    return status === 'committed' || status === 'aborted' || status === 'in progress' ? status : undefined;
  });
}

/**
 * What the execution ledger (pgagent.executions, signed mode) says: a row written in the write's transaction
 * exists only if it committed; a statement run outside a transaction has its row marked done or failed after it
 * ran. Undefined when the database keeps no ledger or it holds nothing about this ticket.
 */
async function ledgerStatus(db: Db, ticket: Ticket): Promise<XactStatus | undefined> {
  return db.withSession(async (session) => {
    if (!(await ledgerPresent(session))) return undefined;
    const row = await ledgerRow(session, ticket.id);
    if (!row) return undefined;
    if (row.status === 'done') return 'committed';
    if (row.status === 'failed') return 'aborted';
    return 'in progress';
  });
}

/**
 * A resolver over the databases this process can open: `databaseFor` gives the Db of a ticket's connection
 * key, or undefined when it cannot be reached from here (another machine's sample database, no password).
 */
export function databaseResolver(
  databaseFor: (connection: string) => Promise<Db | undefined>,
  logger: Logger,
): ExecutionResolver {
  return {
    async status(ticket: Ticket) {
      if (!ticket.execution) return undefined;
      const db = await databaseFor(ticket.connection);
      if (!db) {
        logger.debug('cannot reach the database of an executing ticket', {
          ticket: ticket.id,
          connection: ticket.connection,
        });
        return undefined;
      }
      const fromLedger = await ledgerStatus(db, ticket);
      if (fromLedger !== undefined || ticket.execution.xid === OUTSIDE_TRANSACTION_XID) return fromLedger;
      return xactStatus(db, ticket.execution.xid);
    },
    async resolved(ticket: Ticket) {
      const file = ticket.execution?.undoFile;
      if (ticket.status === 'FAILED' && file !== undefined) {
        if (
          await voidUndoFile(file, `transaction ${ticket.execution?.xid ?? '?'} of ticket ${ticket.id} did not commit`)
        ) {
          logger.info('voided the undo script of a write that did not commit', { ticket: ticket.id, file });
        }
      }
    },
  };
}

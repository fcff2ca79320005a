/**
 * The retry of an approved guard transaction, found to be that very transaction (its templates, its values:
 * valueComparison.ts, its effects: effectBounds.ts): the ticket is claimed with the client's transaction id (as
 * core/sql/executeApproved.ts claims; with a ledger or signed policy, ledgerInTransaction.ts) and the guard
 * COMMITs it, once.
 */
import { LedgerRefusal } from '../../core/approvals/executionLedger';
import type { Ticket } from '../../core/approvals/ticket';
import { toAgentError } from '../../core/platform/errors';
import { durableXid } from '../../core/sql/durableXid';
import type { GuardContext } from '../guardContext';
import { refusedError } from '../hold/heldMessages';
import type { CommitAnswer } from './holdTransaction';
import type { InBandSession } from './ledgerInTransaction';
import { claimInClientTransaction } from './ledgerInTransaction';

export interface ApprovedRetry {
  context: GuardContext;
  inBand: InBandSession;
  user: string;
  /** Rolls the client's transaction back (the guard's own ROLLBACK); `ended`: it ended upstream either way. */
  rollback(): Promise<void>;
  ended(): void;
}

export async function commitApproved(
  retry: ApprovedRetry,
  approved: Ticket,
  connection: string,
): Promise<CommitAnswer> {
  const { context, inBand } = retry;
  // Durable before the claim records it: after a crash restart no later transaction can have this id.
  const { xid } = await durableXid(
    async (sql) => {
      const [xidText, lsn] = (await inBand.run(sql)).rows[0] ?? [];
      return { xid: xidText ?? null, lsn: lsn ?? null };
    },
    await context.openDb(),
  );
  const by = `${context.executedBy} for guard user ${retry.user}`;
  const store = await context.openTicketStore();
  let ticket: Ticket;
  try {
    ticket = await claimInClientTransaction(context, inBand, { ticketId: approved.id, connection, xid, by });
  } catch (error) {
    await retry.rollback();
    // Claimed, then refused by the ledger (a reset ticket): the execution that owns the row is what the ticket resolves to.
    const claimed = !(error instanceof LedgerRefusal) && (await store.get(approved.id))?.execution?.xid === xid;
    if (claimed)
      await store
        .finish(approved.id, { ok: false, by, xid, comment: toAgentError(error).message })
        .catch(() => undefined);
    return {
      kind: 'error',
      fields: refusedError(
        `ticket ${approved.id} could not be claimed; rolled back, nothing kept: ${toAgentError(error).message}`,
      ),
    };
  }
  const committed = await inBand.run('COMMIT');
  retry.ended();
  if (committed.error !== undefined) {
    // Settled from pg_xact_status() by the store when the answer is unclear; here the server said no.
    await store.finish(ticket.id, { ok: false, by, xid, comment: committed.error }).catch(() => undefined);
    return { kind: 'error', fields: { code: '40000', message: committed.error } };
  }
  await store
    .finish(ticket.id, { ok: true, by, xid, comment: "committed by the client's transaction through the guard" })
    .catch((error: unknown) =>
      context.logger.error('a guarded transaction committed but its ticket could not be marked executed', {
        ticket: ticket.id,
        error: String(error),
      }),
    );
  context.logger.info('guard committed an approved transaction', { ticket: ticket.id, xid });
  return { kind: 'committed' };
}

/**
 * The tickets of guard transactions: looked up by what identifies a transaction before its ticket is known (its
 * connection and the key of its statements' templates, transactionRecord.ts), and the client's PA001 for one.
 * Which of them is this very transaction is then decided value by value (valueComparison.ts).
 */
import { isGuardTransaction } from '../../core/approvals/ticket';
import type { Ticket } from '../../core/approvals/ticket';
import type { TicketStore } from '../../core/approvals/ticketStore';
import { heldError } from '../hold/heldMessages';
import type { ErrorFields } from '../wire/backendMessages';
import { templateKeyOf } from './transactionRecord';

/**
 * The live (pending or approved, unexpired) guard transaction tickets of this connection whose statements have
 * these templates, newest first.
 */
export async function liveTransactionTickets(store: TicketStore, connection: string, key: string): Promise<Ticket[]> {
  // Found by the key it was created with (matchKey, holdTransaction.ts); checked again here, as a lookup aid only.
  return (await store.findLive(connection, key)).filter((t) => sameTransaction(t, connection, key));
}

/** A guard transaction ticket of this connection whose statements have these templates. */
function sameTransaction(ticket: Ticket, connection: string, key: string): boolean {
  return (
    ticket.kind === 'write' &&
    ticket.connection === connection &&
    isGuardTransaction(ticket) &&
    templateKeyOf(ticket.transaction?.statements ?? []) === key
  );
}

/** The approved rows per table are the effects the ticket's hash covers (ticketHash), not the impact the card draws. */
export function hashedBounds(ticket: Ticket): Ticket {
  const tables = (ticket.transaction?.effects ?? []).map((e) => ({ ...e, via: 'direct' as const }));
  return { ...ticket, impact: { ...ticket.impact, tables } };
}

/**
 * PA001 for a whole transaction: approved, the client's same transaction (the same statements with the same
 * values, but for those the card says vary on retry) commits once. `heavyAt`: held at heavy statement N
 * (heavyDdl.ts), not at COMMIT.
 */
export function heldTransaction(ticket: Ticket, reused: boolean, heavyAt?: number): ErrorFields {
  const held = heldError(ticket, reused);
  if (heavyAt === undefined) {
    return {
      ...held,
      hint: `A person approves it with: pg-agent approvals approve ${ticket.id} (or in VS Code, "Waiting for you"). Then run the same transaction again (the same statements with the same values; only the values the ticket says vary on retry may differ): it commits once, within the approved rows per table.`,
    };
  }
  return {
    ...held,
    message: held.message.replace(
      /; nothing ran$/,
      `; statement ${heavyAt} is heavy DDL, analysed, not executed; the transaction was rolled back there, nothing kept, no lock held`,
    ),
    hint: `A person approves it with: pg-agent approvals approve ${ticket.id} (or in VS Code, "Waiting for you"). Then run the same transaction again: statements 1..${heavyAt} run for real (${heavyAt} under a short lock_timeout: on 55P03 retry later); a transaction that ends there commits once, a longer one is held once more at its COMMIT for the rest.`,
  };
}

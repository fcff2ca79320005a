/**
 * One pending ticket per statement and database, for every surface (CLI `sql`, MCP `propose_write`, VS Code Run SQL
 * with Review, the guard): the identical statement sent again finds its live ticket (through the store's live index,
 * never a listing) instead of making a second one. A guard transaction's ticket is never a single statement's, even
 * with the same text: only its client's retry commits it.
 *
 * The impact was just measured again: when it is the same (risk, rows per table, would-fail), the pending ticket
 * stands; when it changed, the new measurement gets a new ticket and the pending one is rejected as replaced, so what
 * waits always shows the impact of now. Two processes at the same instant may still make two: the store has no
 * create-if-absent.
 */
import type { ImpactReport } from '../../shared/impactReport';
import type { Ticket } from '../approvals/ticket';
import { isGuardTransaction, sqlHash } from '../approvals/ticket';
import type { NewTicket, TicketStore } from '../approvals/ticketStore';

/**
 * The live write tickets (pending or approved, unexpired) of statements found by `key` on `connection`: the SQL
 * hash, or a statement's `matchKey` (a password statement's text without its passwords, guard/hold/heldPasswords.ts).
 */
export async function liveStatementTickets(store: TicketStore, connection: string, key: string): Promise<Ticket[]> {
  return (await store.findLive(connection, key)).filter((t) => t.kind === 'write' && !isGuardTransaction(t));
}

/** The live write tickets of exactly this statement on this database. */
export async function liveTicketsOf(
  store: TicketStore,
  statement: Pick<NewTicket, 'connection' | 'sql' | 'matchKey'>,
): Promise<Ticket[]> {
  return (await liveStatementTickets(store, statement.connection, statement.matchKey ?? sqlHash(statement.sql))).filter(
    (t) => t.sql === statement.sql,
  );
}

export interface PendingOrNew {
  ticket: Ticket;
  /** The identical statement's pending ticket, with the same impact, was found: no new ticket. */
  reused: boolean;
}

/**
 * The pending ticket of this statement with this impact, or a new one (a pending one with another impact is then
 * rejected as replaced). `anyRequester`: the guard's clients share one ticket per statement (a retry may come on
 * another connection); every other surface reuses only the same requester's.
 */
export async function pendingOrNewTicket(
  store: TicketStore,
  input: NewTicket,
  options: { anyRequester?: boolean } = {},
): Promise<PendingOrNew> {
  const pending = (await liveTicketsOf(store, input)).filter(
    (t) => t.status === 'PENDING_APPROVAL' && (options.anyRequester === true || t.createdBy === input.createdBy),
  );
  const same = pending.find((t) => sameImpact(t.impact, input.impact));
  if (same) return { ticket: same, reused: true };
  const ticket = await store.create(input);
  for (const stale of pending)
    await store
      .decide(stale.id, {
        approve: false,
        by: 'pg-agent',
        comment: `replaced by ${ticket.id}: the same statement measured again, with another impact`,
      })
      .catch(() => undefined); // decided meanwhile by a person: their decision stands
  return { ticket, reused: false };
}

function sameImpact(a: ImpactReport, b: ImpactReport): boolean {
  const tables = (i: ImpactReport) =>
    JSON.stringify(
      i.tables.map((t) => [t.schema, t.name, t.via, t.inserted, t.updated, t.deleted]).sort((x, y) => (x < y ? -1 : 1)),
    );
  return (
    a.risk === b.risk &&
    a.exactRows === b.exactRows &&
    tables(a) === tables(b) &&
    JSON.stringify(a.wouldFail) === JSON.stringify(b.wouldFail)
  );
}

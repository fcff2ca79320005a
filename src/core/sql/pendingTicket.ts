/**
 * One pending ticket per statement and database (CLI `sql`, MCP `propose_write`, VS Code Run SQL with Review, as
 * the guard does): the identical statement sent again by the same requester finds its pending ticket (through the
 * store's live index, never a listing) instead of making a second one. The impact was just measured again: when
 * it is the same (risk, rows per table, would-fail), the pending ticket stands; when it changed, the new
 * measurement gets a new ticket and the pending one is rejected as replaced, so what waits always shows the
 * impact of now. Two processes at the same instant may still make two: the store has no create-if-absent.
 */
import type { ImpactReport } from '../../shared/impactReport';
import type { Ticket } from '../approvals/ticket';
import { sqlHash } from '../approvals/ticket';
import type { NewTicket, TicketStore } from '../approvals/ticketStore';

export async function pendingOrNewTicket(store: TicketStore, input: NewTicket): Promise<Ticket> {
  const pending = (await store.findLive(input.connection, sqlHash(input.sql))).filter(
    (t) =>
      t.status === 'PENDING_APPROVAL' &&
      t.kind === 'write' &&
      t.origin !== 'guardTransaction' &&
      t.sql === input.sql &&
      t.createdBy === input.createdBy,
  );
  const same = pending.find((t) => sameImpact(t.impact, input.impact));
  if (same) return same;
  const ticket = await store.create(input);
  for (const stale of pending)
    await store
      .decide(stale.id, {
        approve: false,
        by: 'pg-agent',
        comment: `replaced by ${ticket.id}: the same statement measured again, with another impact`,
      })
      .catch(() => undefined); // decided meanwhile by a person: their decision stands
  return ticket;
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

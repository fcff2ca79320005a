// A write ticket already APPROVED on postgres://app@db:5432/shop, for the pure rules that count its decisions:
// a test gives the decisions and names what else it is about (risk, SQL, who asked, the impact).
import type { Ticket, TicketDecision } from '../../src/core/approvals/ticket';
import { impactReport } from './impactReports';

export function approvedTicket(decisions: TicketDecision[], over: Partial<Ticket> = {}): Ticket {
  const risk = over.risk ?? 'LOW';
  return {
    id: 'tkt_aaaaaaaaaaaaaaaaaaaa',
    kind: 'write',
    sql: 'x',
    sqlHash: 'a'.repeat(64),
    connection: 'postgres://app@db:5432/shop',
    impact: impactReport({ risk }),
    risk,
    createdBy: 'agent',
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-02T00:00:00.000Z',
    status: 'APPROVED',
    history: [],
    decisions,
    ...over,
  };
}

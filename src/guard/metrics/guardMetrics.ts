/**
 * What `pg-agent guard --metrics HOST:PORT` serves at GET /metrics: clients connected, upstream sessions in
 * use, statements by verdict (counters) and the guard's time on them (histograms), and, read from the ticket
 * store at each scrape, the held statements still waiting for a decision and the age of the oldest. Two
 * guards on one store report the same waiting tickets (alert on max, not sum).
 */
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { StatementVerdict } from './statementTracker';
import { STATEMENT_VERDICTS } from './statementTracker';
import { Counter, Gauge, Histogram, renderMetrics } from './promText';

/** Seconds: a read's judgement is well under a millisecond; a held wait or an approved run may take minutes. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** A ticket a guard client's statement is held on (created for a "guard user …", on this guard's database). */
const GUARD_CLIENT = 'guard user ';

export interface GuardGauges {
  clients(): number;
  upstreamSessions(): number;
}

export class GuardMetrics {
  private readonly statements = new Counter(
    'pg_agent_guard_statements_total',
    "Statements the guard answered, by verdict (passed: a read sent upstream; held: a ticket; executed: an approved retry ran; refused; failed; measured: a write inside a transaction whose COMMIT decides, or a COPY whose data does; other: answers of the guard's own).",
    STATEMENT_VERDICTS.map((verdict) => ({ verdict })),
  );
  private readonly seconds = new Histogram(
    'pg_agent_guard_statement_seconds',
    "The guard's own time on a statement, from its first message to the guard's answer or its forwarding upstream (a read's upstream run is not included; a held wait and an approved run are).",
    BUCKETS,
  );
  private readonly sessions = new Counter(
    'pg_agent_guard_client_sessions_total',
    'Client sessions authenticated since the guard started.',
  );
  private waiting = { count: 0, oldestSeconds: 0, storeUp: 1 };
  private readonly gauges: Gauge[];

  constructor(
    gauges: GuardGauges,
    private readonly tickets: { openTicketStore: () => Promise<TicketStore>; connectionKey: () => Promise<string> },
  ) {
    this.gauges = [
      new Gauge('pg_agent_guard_clients', 'Client connections authenticated now.', () => gauges.clients()),
      new Gauge('pg_agent_guard_upstream_sessions', 'Upstream database sessions in use now.', () =>
        gauges.upstreamSessions(),
      ),
      new Gauge(
        'pg_agent_guard_tickets_waiting',
        "Guard clients' held statements waiting for a decision (pending tickets of this database, read from the ticket store).",
        () => this.waiting.count,
      ),
      new Gauge(
        'pg_agent_guard_ticket_oldest_waiting_seconds',
        'Age of the oldest of those tickets (0 when none waits).',
        () => this.waiting.oldestSeconds,
      ),
      new Gauge(
        'pg_agent_guard_ticket_store_up',
        'Whether the ticket store answered this scrape (1) or not (0: the waiting figures are from the last answer).',
        () => this.waiting.storeUp,
      ),
    ];
  }

  statement(verdict: StatementVerdict, seconds: number): void {
    this.statements.inc({ verdict });
    this.seconds.observe({ verdict }, seconds);
  }

  sessionStarted(): void {
    this.sessions.inc();
  }

  /** The text of GET /metrics; the waiting tickets are read now (one listing of pending tickets per scrape). */
  async render(now = new Date()): Promise<string> {
    try {
      const [store, connection] = await Promise.all([this.tickets.openTicketStore(), this.tickets.connectionKey()]);
      const pending = (await store.list({ status: ['PENDING_APPROVAL'], now })).filter(
        (t) => t.kind === 'write' && t.createdBy.startsWith(GUARD_CLIENT) && t.connection === connection,
      );
      const oldest = Math.min(...pending.map((t) => Date.parse(t.createdAt)));
      this.waiting = {
        count: pending.length,
        oldestSeconds: pending.length > 0 ? Math.max(0, (now.getTime() - oldest) / 1000) : 0,
        storeUp: 1,
      };
    } catch {
      this.waiting = { ...this.waiting, storeUp: 0 };
    }
    return renderMetrics([...this.gauges, this.statements, this.seconds, this.sessions]);
  }
}

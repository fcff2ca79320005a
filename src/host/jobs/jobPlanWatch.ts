/**
 * A job waiting at its plan review moves on when its plan ticket is decided anywhere: another window,
 * `pg-agent approvals approve` in a terminal, or a teammate over a shared Redis (SPEC §5.3). One path per
 * decision: a ticket this window decides is not watched (the deciding step resumes the job itself), and a
 * ticket decided elsewhere is reported once — no retries; a resume that went nowhere waits for Continue.
 */
import type { Ticket } from '../../core/approvals/ticket';
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { Logger } from '../../core/platform/logger';

export class JobPlanWatch {
  private readonly watching = new Map<string, AbortController>();
  /** Tickets reported decided, or decided by this window: never watched again. */
  private readonly done = new Set<string>();
  /** Tickets a step of this window is deciding now: not watched while it runs. */
  private readonly deciding = new Set<string>();

  constructor(
    private readonly store: () => Promise<TicketStore>,
    private readonly logger: Logger,
    /** Called once when the ticket left PENDING_APPROVAL elsewhere (the caller resumes the job from the ticket). */
    private readonly decided: (jobId: string, ticket: Ticket) => Promise<void>,
  ) {}

  /** Watches the plan ticket of a job at review (once per ticket). */
  watch(jobId: string, ticketId: string): void {
    if (this.watching.has(ticketId) || this.done.has(ticketId) || this.deciding.has(ticketId)) return;
    const controller = new AbortController();
    this.watching.set(ticketId, controller);
    void this.store()
      .then((store) => store.waitForDecision(ticketId, controller.signal))
      .then(async (ticket) => {
        this.watching.delete(ticketId);
        this.done.add(ticketId);
        await this.decided(jobId, ticket);
      })
      .catch((error: unknown) => {
        if (this.watching.get(ticketId) === controller) this.watching.delete(ticketId);
        if (!controller.signal.aborted)
          this.logger.warn('stopped watching a plan ticket', { jobId, ticket: ticketId, error: String(error) });
      });
  }

  /**
   * A step of this window decides `ticketId` now: its watch stops at once. `settled(true)` when the step decided it
   * (never watched again); `settled(false)` when it ended before deciding (watched again by the next refresh).
   */
  decidingHere(ticketId: string): (decided: boolean) => void {
    this.watching.get(ticketId)?.abort();
    this.watching.delete(ticketId);
    this.deciding.add(ticketId);
    return (decided) => {
      this.deciding.delete(ticketId);
      if (decided) this.done.add(ticketId);
    };
  }

  dispose(): void {
    for (const controller of this.watching.values()) controller.abort();
    this.watching.clear();
  }
}

/**
 * A job waiting at its plan review moves on when its plan ticket is decided anywhere: another window,
 * `pg-agent approvals approve` in a terminal, or a teammate over a shared Redis (SPEC §5.3).
 */
import type { TicketStore } from '../core/approvals/ticketStore';
import type { Logger } from '../core/logger';

export class JobPlanWatch {
  private readonly watching = new Map<string, AbortController>();
  /**
   * Tickets already reported decided: reported once only. A job still shown at the review of a decided
   * ticket (its resume failed, or went nowhere) waits for the person's Continue instead of being resumed
   * again and again by every refresh of the view.
   */
  private readonly reported = new Set<string>();

  constructor(
    private readonly store: () => Promise<TicketStore>,
    private readonly logger: Logger,
    /** Called once the ticket left PENDING_APPROVAL (the caller resumes the job from the ticket). */
    private readonly decided: (jobId: string, by: string) => void,
  ) {}

  /** Watches the plan ticket of a job at review (once per ticket). */
  watch(jobId: string, ticketId: string): void {
    if (this.watching.has(ticketId) || this.reported.has(ticketId)) return;
    const controller = new AbortController();
    this.watching.set(ticketId, controller);
    void this.store()
      .then((store) => store.waitForDecision(ticketId, controller.signal))
      .then((ticket) => {
        this.watching.delete(ticketId);
        this.reported.add(ticketId);
        this.decided(jobId, ticket.decisions.at(-1)?.by ?? 'someone');
      })
      .catch((error: unknown) => {
        this.watching.delete(ticketId);
        if (!controller.signal.aborted) this.logger.warn('stopped watching a plan ticket', { jobId, ticket: ticketId, error: String(error) });
      });
  }

  dispose(): void {
    for (const controller of this.watching.values()) controller.abort();
    this.watching.clear();
  }
}

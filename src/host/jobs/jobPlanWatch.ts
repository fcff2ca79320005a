/**
 * A job waiting at its plan review moves on when its plan ticket is decided anywhere: another window,
 * `pg-agent approvals approve` in a terminal, or a teammate over a shared Redis (SPEC §5.3).
 */
import type { Ticket } from '../../core/approvals/ticket';
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { Logger } from '../../core/platform/logger';

/** After a resume that left the job at the review of its decided ticket: wait this long, then try again. */
const RETRY_DELAYS_MS = [1_000, 3_000, 9_000];

export class JobPlanWatch {
  private readonly watching = new Map<string, AbortController>();
  /**
   * Tickets already reported decided. A job still shown at the review of a decided ticket (its resume
   * failed, or went nowhere) is resumed again only a few times, spaced out (RETRY_DELAYS_MS), and then
   * waits for the person's Continue instead of being resumed by every refresh of the view.
   */
  private readonly reported = new Set<string>();
  private readonly retries = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: () => Promise<TicketStore>,
    private readonly logger: Logger,
    /**
     * Called once the ticket left PENDING_APPROVAL (the caller resumes the job from the ticket); resolves
     * whether the job has left the review of that ticket.
     */
    private readonly decided: (jobId: string, ticket: Ticket) => Promise<boolean>,
    private readonly retryDelaysMs: readonly number[] = RETRY_DELAYS_MS,
  ) {}

  /** Watches the plan ticket of a job at review (once per ticket). */
  watch(jobId: string, ticketId: string): void {
    if (this.watching.has(ticketId) || this.reported.has(ticketId)) return;
    const controller = new AbortController();
    this.watching.set(ticketId, controller);
    void this.store()
      .then((store) => store.waitForDecision(ticketId, controller.signal))
      .then(async (ticket) => {
        this.watching.delete(ticketId);
        this.reported.add(ticketId);
        if (!(await this.decided(jobId, ticket))) this.retryLater(jobId, ticketId);
      })
      .catch((error: unknown) => {
        this.watching.delete(ticketId);
        if (!controller.signal.aborted) this.logger.warn('stopped watching a plan ticket', { jobId, ticket: ticketId, error: String(error) });
      });
  }

  dispose(): void {
    for (const controller of this.watching.values()) controller.abort();
    this.watching.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private retryLater(jobId: string, ticketId: string): void {
    const attempt = this.retries.get(ticketId) ?? 0;
    const delay = this.retryDelaysMs[attempt];
    if (delay === undefined) {
      this.logger.warn('a decided plan ticket did not move its job on; Continue in the cockpit resumes it', { jobId, ticket: ticketId, attempts: attempt + 1 });
      return;
    }
    this.retries.set(ticketId, attempt + 1);
    this.logger.debug('a decided plan ticket did not move its job on yet; trying again', { jobId, ticket: ticketId, inMs: delay });
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.reported.delete(ticketId);
      this.watch(jobId, ticketId);
    }, delay);
    this.timers.add(timer);
  }
}

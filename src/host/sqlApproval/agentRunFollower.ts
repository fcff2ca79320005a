/**
 * An outside agent's approved proposal is run by that agent (execute_approved), not by the window that approved
 * it: the window follows the ticket until it is settled (executed, failed, expired, rejected) or the watch is
 * aborted. A file read (or one Redis GET) every few seconds, only while such a ticket waits.
 */
import type { Ticket, TicketStatus } from '../../core/approvals/ticket';
import type { TicketStore } from '../../core/approvals/ticketStore';

const FOLLOW_INTERVAL_MS = 2_000;

/** Where a ticket ends: nothing more will happen to it. */
const SETTLED: ReadonlySet<TicketStatus> = new Set<TicketStatus>(['EXECUTED', 'FAILED', 'EXPIRED', 'REJECTED']);

/** The ticket once it is settled; rejects when the ticket is gone or `signal` aborts. */
export async function followAgentRun(
  store: () => Promise<Pick<TicketStore, 'get'>>,
  ticketId: string,
  signal: AbortSignal,
  intervalMs = FOLLOW_INTERVAL_MS,
): Promise<Ticket> {
  for (;;) {
    signal.throwIfAborted();
    const ticket = await (await store()).get(ticketId);
    if (!ticket) throw new Error(`ticket ${ticketId} is gone`);
    if (SETTLED.has(ticket.status)) return ticket;
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', stop);
        resolve();
      }, intervalMs);
      const stop = () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', stop, { once: true });
    });
  }
}

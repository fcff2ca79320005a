/** Waiting for a person's decision on a ticket, whichever store holds it and wherever it is made. */
import type { Ticket } from './ticket';
import { ticketNotFound } from './ticketRules';

export interface WaitSource {
  /** The ticket as it now is, expiry applied. */
  get(id: string): Promise<Ticket | undefined>;
  /** Calls onChange whenever the ticket may have changed; resolves once listening, with the way to stop. */
  watch(id: string, onChange: () => void): Promise<() => void>;
  /** Safety net for notifications that never arrive (missed watch events, a pub/sub reconnect). */
  pollMs: number;
  where: string;
  onCheckFailed(error: unknown): void;
}

/**
 * Waits until a ticket leaves PENDING_APPROVAL. The ticket is read once after listening starts, so a
 * decision made just before is not missed, and again when the ticket's expiry comes.
 */
export function waitForDecision(id: string, source: WaitSource, signal?: AbortSignal): Promise<Ticket> {
  return new Promise<Ticket>((resolve, reject) => {
    let settled = false;
    let checking = false;
    let checkAgain = false;
    let readOnce = false;
    let stopWatching: (() => void) | undefined;
    let expiryTimer: NodeJS.Timeout | undefined;
    const pollTimer = setInterval(() => void check(), source.pollMs);

    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(pollTimer);
      clearTimeout(expiryTimer);
      stopWatching?.();
      signal?.removeEventListener('abort', onAbort);
      finish();
    };
    const onAbort = () =>
      settle(() => reject(new DOMException(`Stopped waiting for the decision on ticket ${id}.`, 'AbortError')));

    const check = async (): Promise<void> => {
      if (settled) return;
      if (checking) {
        checkAgain = true;
        return;
      }
      checking = true;
      try {
        const ticket = await source.get(id);
        // The wait ended (cancelled, the client gone) while this read was out: arm nothing that outlives it.
        if (settled) return;
        if (!ticket) throw ticketNotFound(id, source.where);
        readOnce = true;
        if (ticket.status !== 'PENDING_APPROVAL') return settle(() => resolve(ticket));
        clearTimeout(expiryTimer);
        // setTimeout takes at most 2^31-1 ms; the poll covers anything further away.
        const untilExpiry = Math.min(Math.max(Date.parse(ticket.expiresAt) - Date.now() + 20, 0), 2 ** 31 - 1);
        expiryTimer = setTimeout(() => void check(), untilExpiry);
      } catch (error) {
        // The first read decides whether there is anything to wait for; later failures (a Redis blip, a
        // disk hiccup) are retried by the next notification or poll rather than ending a long wait.
        if (!readOnce) settle(() => reject(error instanceof Error ? error : new Error(String(error))));
        else source.onCheckFailed(error);
      } finally {
        checking = false;
      }
      if (checkAgain) {
        checkAgain = false;
        await check();
      }
    };

    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    source
      .watch(id, () => void check())
      .then(
        (stop) => {
          if (settled) return stop();
          stopWatching = stop;
          void check();
        },
        (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
      );
  });
}

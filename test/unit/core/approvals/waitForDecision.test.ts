/**
 * waitForDecision: a wait that ends (a cancel, a client gone) leaves no timer behind, even when the ticket
 * read it started is still out at that moment. A timer left armed until the ticket's expiry kept a stopping
 * `pg-agent guard` alive for hours after a client's Ctrl-C.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Ticket } from '../../../../src/core/approvals/ticket';
import type { WaitSource } from '../../../../src/core/approvals/waitForDecision';
import { waitForDecision } from '../../../../src/core/approvals/waitForDecision';

const pending = (): Ticket =>
  ({
    id: 'tkt_aaaaaaaaaaaaaaaaaaaa',
    status: 'PENDING_APPROVAL',
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
  }) as Ticket;

/** A store whose reads resolve only when the test says so, with a watch that never fires. */
function slowSource(): { source: WaitSource; reads: ((ticket: Ticket) => void)[]; stopped: () => number } {
  const reads: ((ticket: Ticket) => void)[] = [];
  let stops = 0;
  const source: WaitSource = {
    get: () => new Promise<Ticket>((resolve) => reads.push(resolve)),
    watch: () => Promise.resolve(() => void stops++),
    pollMs: 60_000,
    where: 'test',
    onCheckFailed: () => undefined,
  };
  return { source, reads, stopped: () => stops };
}

describe('waitForDecision', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('arms no expiry timer for a read that comes back after the wait was aborted', async () => {
    const { source, reads, stopped } = slowSource();
    const abort = new AbortController();
    const waited = waitForDecision('tkt_aaaaaaaaaaaaaaaaaaaa', source, abort.signal).catch((error: unknown) => error);
    await vi.waitFor(() => expect(reads).toHaveLength(1));
    abort.abort();
    reads[0]!(pending());
    expect(((await waited) as Error).name).toBe('AbortError');
    await Promise.resolve();
    expect(stopped()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('while it waits, keeps one poll and one expiry timer, and none once aborted', async () => {
    const { source, reads } = slowSource();
    const abort = new AbortController();
    const waited = waitForDecision('tkt_aaaaaaaaaaaaaaaaaaaa', source, abort.signal).catch((error: unknown) => error);
    await vi.waitFor(() => expect(reads).toHaveLength(1));
    reads[0]!(pending());
    await vi.waitFor(() => expect(vi.getTimerCount()).toBe(2));
    abort.abort();
    await waited;
    expect(vi.getTimerCount()).toBe(0);
  });
});

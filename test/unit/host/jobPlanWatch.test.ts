import { describe, expect, it } from 'vitest';
import type { Ticket } from '../../../src/core/approvals/ticket';
import type { TicketStore } from '../../../src/core/approvals/ticketStore';
import { silentLogger } from '../../../src/core/platform/logger';
import { JobPlanWatch } from '../../../src/host/jobs/jobPlanWatch';

/** A ticket store whose tickets are all decided already: waitForDecision answers at once. */
function decidedStore(): { store: TicketStore; waits: string[] } {
  const waits: string[] = [];
  const store = {
    waitForDecision: (id: string) => {
      waits.push(id);
      return Promise.resolve({ id, decisions: [{ by: 'teammate', approve: true }] } as unknown as Ticket);
    },
  } as unknown as TicketStore;
  return { store, waits };
}

/** A ticket store whose tickets stay pending until the watch is stopped. */
function pendingStore(): { store: TicketStore; waits: string[]; stopped: string[] } {
  const waits: string[] = [];
  const stopped: string[] = [];
  const store = {
    waitForDecision: (id: string, signal?: AbortSignal) => {
      waits.push(id);
      return new Promise<Ticket>((_resolve, reject) => {
        signal?.addEventListener('abort', () => {
          stopped.push(id);
          reject(new DOMException('stopped', 'AbortError'));
        });
      });
    },
  } as unknown as TicketStore;
  return { store, waits, stopped };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('JobPlanWatch (a plan decided in a terminal or by a teammate)', () => {
  it('reports a decided plan ticket once, however often the view watches it again; no retries', async () => {
    const { store, waits } = decidedStore();
    const decided: string[] = [];
    const watch = new JobPlanWatch(
      () => Promise.resolve(store),
      silentLogger,
      (jobId, ticket) => {
        decided.push(`${jobId} by ${ticket.decisions.at(-1)?.by ?? '?'}`);
        return Promise.resolve();
      },
    );
    watch.watch('job_1', 'ticket_a');
    await settle();
    // The job is still shown at this review (its resume went nowhere): every refresh asks to watch again.
    for (let i = 0; i < 5; i++) {
      watch.watch('job_1', 'ticket_a');
      await settle();
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(decided).toEqual(['job_1 by teammate']);
    expect(waits).toEqual(['ticket_a']);
    // A new plan ticket (the next review) is watched as usual.
    watch.watch('job_1', 'ticket_b');
    await settle();
    expect(decided).toEqual(['job_1 by teammate', 'job_1 by teammate']);
    watch.dispose();
  });

  it('stops watching a ticket this window decides, and never reports it: the deciding step resumes the job itself', async () => {
    const { store, waits, stopped } = pendingStore();
    const decided: string[] = [];
    const watch = new JobPlanWatch(
      () => Promise.resolve(store),
      silentLogger,
      (jobId) => {
        decided.push(jobId);
        return Promise.resolve();
      },
    );
    watch.watch('job_1', 'ticket_a');
    await settle();
    expect(waits).toEqual(['ticket_a']);
    const settled = watch.decidingHere('ticket_a');
    await settle();
    expect(stopped).toEqual(['ticket_a']);
    // While the step runs, and after it decided the ticket, refreshes do not watch it again.
    watch.watch('job_1', 'ticket_a');
    settled(true);
    watch.watch('job_1', 'ticket_a');
    await settle();
    expect(waits).toEqual(['ticket_a']);
    expect(decided).toEqual([]);
    watch.dispose();
  });

  it("watches a ticket again when this window's step ended before deciding it (a stale click, no model)", async () => {
    const { store, waits } = pendingStore();
    const watch = new JobPlanWatch(
      () => Promise.resolve(store),
      silentLogger,
      () => Promise.resolve(),
    );
    watch.watch('job_1', 'ticket_a');
    await settle();
    const settled = watch.decidingHere('ticket_a');
    settled(false);
    watch.watch('job_1', 'ticket_a');
    await settle();
    expect(waits).toEqual(['ticket_a', 'ticket_a']);
    watch.dispose();
  });
});

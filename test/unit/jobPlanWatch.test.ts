import { describe, expect, it } from 'vitest';
import type { Ticket } from '../../src/core/approvals/ticket';
import type { TicketStore } from '../../src/core/approvals/ticketStore';
import { silentLogger } from '../../src/core/logger';
import { JobPlanWatch } from '../../src/host/jobPlanWatch';

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

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('JobPlanWatch (a plan decided in a terminal or by a teammate)', () => {
  it('reports a decided plan ticket once, however often the view watches it again', async () => {
    const { store, waits } = decidedStore();
    const decided: string[] = [];
    const watch = new JobPlanWatch(() => Promise.resolve(store), silentLogger, (jobId, by) => decided.push(`${jobId} by ${by}`));
    watch.watch('job_1', 'ticket_a');
    await settle();
    // The job is still shown at this review (its resume went nowhere): every refresh asks to watch again.
    for (let i = 0; i < 5; i++) {
      watch.watch('job_1', 'ticket_a');
      await settle();
    }
    expect(decided).toEqual(['job_1 by teammate']);
    expect(waits).toEqual(['ticket_a']);
    // A new plan ticket (the next review) is watched as usual.
    watch.watch('job_1', 'ticket_b');
    await settle();
    expect(decided).toEqual(['job_1 by teammate', 'job_1 by teammate']);
    watch.dispose();
  });
});

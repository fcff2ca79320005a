import { describe, expect, it } from 'vitest';
import type { Ticket } from '../../src/core/approvals/ticket';
import type { TicketStore } from '../../src/core/approvals/ticketStore';
import { silentLogger } from '../../src/core/platform/logger';
import { JobPlanWatch } from '../../src/host/jobs/jobPlanWatch';

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
    const watch = new JobPlanWatch(() => Promise.resolve(store), silentLogger, (jobId, ticket) => {
      decided.push(`${jobId} by ${ticket.decisions.at(-1)?.by ?? '?'}`);
      return Promise.resolve(true);
    });
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

  it('tries again, a few times and spaced out, when the resume left the job at the review of its decided ticket', async () => {
    const { store, waits } = decidedStore();
    // The first resume read the ticket just before the decision and stayed; the second went on.
    const movedOn = [false, true];
    const decided: string[] = [];
    const watch = new JobPlanWatch(
      () => Promise.resolve(store),
      silentLogger,
      (jobId) => {
        decided.push(jobId);
        return Promise.resolve(movedOn.shift() ?? true);
      },
      [5, 5, 5],
    );
    watch.watch('job_1', 'ticket_a');
    await expect.poll(() => decided.length).toBe(2);
    expect(decided).toEqual(['job_1', 'job_1']);
    expect(waits).toEqual(['ticket_a', 'ticket_a']);
    watch.dispose();
  });

  it('gives up after its retries (the person\'s Continue is left), so a resume that goes nowhere does not loop', async () => {
    const { store } = decidedStore();
    let resumes = 0;
    const watch = new JobPlanWatch(
      () => Promise.resolve(store),
      silentLogger,
      () => {
        resumes += 1;
        return Promise.resolve(false);
      },
      [5, 5],
    );
    watch.watch('job_1', 'ticket_a');
    await expect.poll(() => resumes).toBe(3);
    // Past the last retry, the view watching it again changes nothing.
    await new Promise((resolve) => setTimeout(resolve, 30));
    for (let i = 0; i < 5; i++) {
      watch.watch('job_1', 'ticket_a');
      await settle();
    }
    expect(resumes).toBe(3);
    watch.dispose();
  });
});

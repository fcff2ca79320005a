// A plan decision made in this window (planDecisions.decidePlanHere) and the watch of its ticket (JobPlanWatch):
// the ticket is not watched while the step runs, never again once decided here, and again when the step ended
// before deciding it (a stale click, no model), so a decision made elsewhere later is still picked up.
import { describe, expect, it } from 'vitest';
import type { Ticket } from '../../../src/core/approvals/ticket';
import type { TicketStore } from '../../../src/core/approvals/ticketStore';
import type { JobOutcome } from '../../../src/core/jobs/jobOutcome';
import { AgentError } from '../../../src/core/platform/errors';
import { silentLogger } from '../../../src/core/platform/logger';
import { JobPlanWatch } from '../../../src/host/jobs/jobPlanWatch';
import type { JobSteps } from '../../../src/host/jobs/jobSteps';
import { decidePlanHere } from '../../../src/host/jobs/planDecisions';

/** Tickets that stay pending; each wait is recorded, and stops with its signal. */
function pendingStore(): { store: TicketStore; waits: string[] } {
  const waits: string[] = [];
  const store = {
    waitForDecision: (id: string, signal?: AbortSignal) => {
      waits.push(id);
      return new Promise<Ticket>((_resolve, reject) =>
        signal?.addEventListener('abort', () => reject(new DOMException('stopped', 'AbortError'))),
      );
    },
  } as unknown as TicketStore;
  return { store, waits };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const outcome = { job: { id: 'job_1' }, stop: { kind: 'completed', summary: '' } } as unknown as JobOutcome;

async function decideWith(run: JobSteps['run']): Promise<{ waits: string[]; watchedDuring: number }> {
  const { store, waits } = pendingStore();
  const watch = new JobPlanWatch(
    () => Promise.resolve(store),
    silentLogger,
    () => Promise.resolve(),
  );
  watch.watch('job_1', 'tkt_a');
  await settle();
  let watchedDuring = 0;
  await decidePlanHere(
    {
      steps: {
        run: async (...args: Parameters<JobSteps['run']>) => {
          // A refresh while the step runs asks to watch the ticket again.
          watch.watch('job_1', 'tkt_a');
          await settle();
          watchedDuring = waits.length - 1;
          return run(...args);
        },
      },
      planWatch: watch,
      decider: () => Promise.resolve({ by: 'reviewer' }),
    },
    { kind: 'approvePlan', jobId: 'job_1', ticketId: 'tkt_a', seenHash: 'h' },
  ).catch(() => undefined);
  // The refresh after the step.
  watch.watch('job_1', 'tkt_a');
  await settle();
  watch.dispose();
  return { waits, watchedDuring };
}

describe('a plan decision made in this window and the watch of its ticket', () => {
  it('does not watch the ticket while its step runs, nor after the step decided it', async () => {
    const { waits, watchedDuring } = await decideWith(() => Promise.resolve(outcome));
    expect(watchedDuring).toBe(0);
    expect(waits).toEqual(['tkt_a']);
  });

  it('does not watch it again after a policy refusal (the ticket is approved; Continue goes on once the policy is met)', async () => {
    const { waits } = await decideWith(() =>
      Promise.reject(new AgentError('APPROVAL_POLICY', 'needs a second approver')),
    );
    expect(waits).toEqual(['tkt_a']);
  });

  it('watches it again when the step ended before deciding it: a stale click, or no model configured', async () => {
    for (const run of [
      () => Promise.reject(new AgentError('APPROVAL_STALE', 'the plan changed')),
      () => Promise.resolve(undefined),
    ]) {
      const { waits } = await decideWith(run);
      expect(waits).toEqual(['tkt_a', 'tkt_a']);
    }
  });
});

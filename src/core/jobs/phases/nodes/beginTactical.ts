/** Starts a tactical phase: status running, counters reset, the instruction to execute the pending todos. */
import type { JobGraphDeps } from '../jobGraphDeps';
import { activeJob, ensureStatus } from '../jobStatusSync';
import { readTodosIfAny } from '../workspaceTools';
import type { JobNode } from './nodeType';

export function makeBeginTacticalNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const job = await activeJob(deps, state.jobId);
    await ensureStatus(deps, state.jobId, 'running', 'tactical phase');
    if (job.phase !== 'tactical') await deps.store.update(state.jobId, { phase: 'tactical' });
    const iteration = state.tacticalPhases + 1;
    await deps.audit(state.jobId, { type: 'phase', phase: 'tactical', event: 'start', iteration });
    deps.emit({ type: 'step', jobId: state.jobId, phase: 'tactical', message: 'Executing the plan…' });
    const pending = (await readTodosIfAny(deps.store, state.jobId)).filter(
      (t) => t.status === 'pending' || t.status === 'in_progress',
    );
    const review = state.review;
    const approval =
      iteration === 1 && review
        ? review.action === 'skip'
          ? `The person chose to run the plan as is (review skipped by ${review.by}). `
          : `The plan was approved by ${review.by}.${review.comment ? ` Their comment: ${review.comment}` : ''} `
        : '';
    const list =
      pending.length === 0 ? 'There are no pending todos.' : `Pending todos: ${pending.map((t) => t.id).join(', ')}.`;
    return {
      phase: 'tactical',
      tacticalPhases: iteration,
      phaseCalls: 0,
      phaseEnd: undefined,
      messages: [
        { role: 'user', content: `${approval}Tactical phase ${iteration} begins. ${list} Execute them in order.` },
      ],
    };
  };
}

/** Starts a strategic phase: status planning, counters reset, the task as the first message of a new job. */
import type { JobGraphDeps } from '../jobGraphDeps';
import { activeJob, ensureStatus } from '../jobStatusSync';
import type { JobNode } from './nodeType';

export function makeBeginStrategicNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const job = await activeJob(deps, state.jobId);
    await ensureStatus(
      deps,
      state.jobId,
      'planning',
      state.tacticalPhases > 0 ? 're-planning after tactical work' : 'strategic phase',
    );
    if (job.phase !== 'strategic') await deps.store.update(state.jobId, { phase: 'strategic' });
    const iteration = state.strategicIterations + 1;
    await deps.audit(state.jobId, { type: 'phase', phase: 'strategic', event: 'start', iteration });
    deps.emit({
      type: 'step',
      jobId: state.jobId,
      phase: 'strategic',
      message: iteration === 1 ? 'Exploring the database…' : 'Re-planning…',
    });
    const opening =
      state.messages.length === 0
        ? `The task:\n${await deps.store.readFile(state.jobId, 'workspace.md')}`
        : state.phaseEnd?.kind === 'finish_phase'
          ? `Tactical phase ${state.tacticalPhases} ended: ${state.phaseEnd.summary}\nRe-plan from what happened: update workspace.md, plan.md and the todos, then call plan_ready; call job_complete if the task is done.`
          : undefined;
    const first = opening === undefined ? [] : [{ role: 'user' as const, content: opening }];
    return { phase: 'strategic', strategicIterations: iteration, phaseCalls: 0, phaseEnd: undefined, messages: first };
  };
}

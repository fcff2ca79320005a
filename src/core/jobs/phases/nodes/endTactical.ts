/** The end of a tactical phase: recorded and committed; the strategic phase re-plans next (or the job ends). */
import type { JobGraphDeps } from '../jobGraphDeps';
import { commitJob } from '../jobHistoryCommit';
import type { JobNode } from './nodeType';

export function makeEndTacticalNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const end = state.phaseEnd ?? { kind: 'finish_phase', summary: 'tactical phase ended' };
    const summary = end.kind === 'job_failed' ? end.reason : end.summary;
    await deps.audit(state.jobId, {
      type: 'phase',
      phase: 'tactical',
      event: 'end',
      iteration: state.tacticalPhases,
      summary,
    });
    await commitJob(deps, state.jobId, `Tactical phase ${state.tacticalPhases}: ${summary}`);
    await deps.indexForSearch?.(deps.store, state.jobId, deps.loadSnapshot);
    return { phaseEnd: end, messages: { compact: true } };
  };
}

/**
 * The transition at the end of a strategic phase: the phase is committed to the job history, and the
 * job either stops for review (interactive, no tactical work yet, review not skipped), goes on to the
 * tactical phase, or ends.
 */
import type { PlanningSettings } from '../../jobRunner';
import type { Job } from '../../job';
import type { JobGraphDeps } from '../jobGraphDeps';
import { commitJob } from '../jobHistoryCommit';
import type { JobStateValue } from '../jobState';
import type { JobNode } from './nodeType';

/** Seed 002: with planning.interactive and no tactical work done yet, the plan waits for the person. */
export function reviewRequired(state: Pick<JobStateValue, 'phaseEnd' | 'tacticalPhases'>, job: Pick<Job, 'skipReview'>, planning: PlanningSettings): boolean {
  return state.phaseEnd?.kind === 'plan_ready' && planning.interactive && job.skipReview !== true && state.tacticalPhases === 0;
}

export function makeEndStrategicNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const job = await deps.store.get(state.jobId);
    const end = state.phaseEnd ?? { kind: 'plan_ready', summary: 'plan written' };
    const review = reviewRequired({ ...state, phaseEnd: end }, job, deps.planning);
    const summary = end.kind === 'job_failed' ? end.reason : end.summary;
    await deps.audit(state.jobId, { type: 'phase', phase: 'strategic', event: 'end', iteration: state.strategicIterations, summary });
    const message = review ? `Review cycle ${job.reviewCycles + 1}: plan ready for review — ${summary}` : `Strategic phase ${state.strategicIterations}: ${summary}`;
    await commitJob(deps, state.jobId, message);
    return { phaseEnd: end, reviewRequired: review };
  };
}

/**
 * The transition at the end of a strategic phase: the phase is committed to the job history, and the
 * job either stops for review (interactive, no tactical work yet, review not skipped), goes on to the
 * tactical phase, or ends.
 */
import type { PlanningSettings } from '../../planningSettings';
import type { Job } from '../../job';
import type { JobGraphDeps } from '../jobGraphDeps';
import { commitJob } from '../jobHistoryCommit';
import type { JobStateValue } from '../jobState';
import type { JobNode } from './nodeType';
import { createPlanTicket } from '../../../approvals/planTicket';
import { readPlanFiles } from '../../planFiles';

/** Seed 002: with planning.interactive and no tactical work done yet, the plan waits for the person. */
export function reviewRequired(
  state: Pick<JobStateValue, 'phaseEnd' | 'tacticalPhases'>,
  job: Pick<Job, 'skipReview'>,
  planning: PlanningSettings,
): boolean {
  return (
    state.phaseEnd?.kind === 'plan_ready' &&
    planning.interactive &&
    job.skipReview !== true &&
    state.tacticalPhases === 0
  );
}

export function makeEndStrategicNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const job = await deps.store.get(state.jobId);
    const end = state.phaseEnd ?? { kind: 'plan_ready', summary: 'plan written' };
    const review = reviewRequired({ ...state, phaseEnd: end }, job, deps.planning);
    const summary = end.kind === 'job_failed' ? end.reason : end.summary;
    await deps.audit(state.jobId, {
      type: 'phase',
      phase: 'strategic',
      event: 'end',
      iteration: state.strategicIterations,
      summary,
    });
    const message = review
      ? `Review cycle ${job.reviewCycles + 1}: plan ready for review — ${summary}`
      : `Strategic phase ${state.strategicIterations}: ${summary}`;
    await commitJob(deps, state.jobId, message);
    await deps.indexForSearch?.(deps.store, state.jobId, deps.loadSnapshot);
    if (!review) return { phaseEnd: end, reviewRequired: review, planTicket: undefined, messages: { compact: true } };
    // The review stop waits on a plan ticket for exactly these files (a node that runs once per pass, so one ticket).
    const files = await readPlanFiles(deps.store, state.jobId);
    const ticket = await createPlanTicket(deps.ticketStore, {
      ...files,
      cycle: job.reviewCycles + 1,
      title: job.title,
      connection: deps.connectionKey,
      requestedBy: deps.requestedBy,
    });
    await deps.audit(state.jobId, {
      type: 'approval',
      ticketId: ticket.id,
      approve: false,
      by: deps.requestedBy,
      comment: `plan ticket for review cycle ${job.reviewCycles + 1}`,
      recorded: false,
    });
    return {
      phaseEnd: end,
      reviewRequired: review,
      planTicket: { id: ticket.id, hash: ticket.sqlHash },
      messages: { compact: true },
    };
  };
}

/**
 * Where a job stands (no model call, no database access): its job file, the graph's checkpoint and the stop
 * they mean. The plan is hashed only when asked and only at the review: the hash the person is shown, or the
 * one a decision at the review carries on (computed once per decision).
 */
import type { PlanFiles } from '../approvals/planTicket';
import { planHash } from '../approvals/planTicket';
import { AgentError, toAgentError } from '../platform/errors';
import type { JobOutcome, JobStop } from './jobOutcome';
import type { JobStore } from './jobStore';
import type { JobGraph } from './phases/jobGraph';
import type { JobStateValue } from './phases/jobState';
import { readPlanFiles } from './planFiles';
import type { PlanningSettings } from './planningSettings';

export interface Standing {
  outcome: JobOutcome;
  /** The graph's state at its checkpoint. */
  state: Partial<JobStateValue>;
  /** Whether the graph has run at all (a created job has no checkpoint yet). */
  started: boolean;
  /** The plan as it is now, when it was hashed (at the review, when asked). */
  plan?: { files: PlanFiles; hash: string };
}

export const threadOf = (jobId: string) => ({ configurable: { thread_id: jobId } });

export async function readStanding(
  store: JobStore,
  graph: JobGraph,
  planning: PlanningSettings,
  jobId: string,
  options: { hashPlan: boolean; error?: unknown },
): Promise<Standing> {
  const job = await store.get(jobId);
  const snapshot = await graph.getState(threadOf(jobId));
  const state = snapshot.values as Partial<JobStateValue>;
  const execution = state.lastExecution;
  const atReview = snapshot.next.includes('reviewGate');
  const files = atReview && options.hashPlan ? await readPlanFiles(store, jobId) : undefined;
  // What the person looks at now: the panel sends this hash back with its decision (a stale click is refused).
  const plan = files ? { files, hash: planHash(files) } : undefined;
  const stop = ((): JobStop => {
    switch (job.status) {
      case 'cancelled':
        return { kind: 'cancelled' };
      case 'frozen':
        return { kind: 'frozen' };
      case 'completed':
        return { kind: 'completed', summary: state.phaseEnd?.kind === 'job_complete' ? state.phaseEnd.summary : '' };
      case 'failed':
        return { kind: 'failed', error: state.error ?? { code: 'JOB_FAILED', message: 'The job failed.' } };
      default:
        break;
    }
    if (atReview) {
      return {
        kind: 'review',
        cycle: job.reviewCycles,
        maxReviewCycles: planning.maxReviewCycles,
        overLimit: job.reviewCycles >= planning.maxReviewCycles,
        ...(state.planTicket ? { ticketId: state.planTicket.id, ...(plan ? { planHash: plan.hash } : {}) } : {}),
      };
    }
    const pending = state.pendingWrite;
    if (snapshot.next.includes('awaitWrite') && pending) {
      return {
        kind: 'approval',
        ticketId: pending.ticketId,
        sql: pending.sql,
        sqlFile: pending.sqlFile,
        impact: pending.impact,
        todoId: pending.todoId,
        ...(pending.lockWait ? { lockWait: pending.lockWait } : {}),
      };
    }
    return options.error === undefined
      ? { kind: 'interrupted' }
      : { kind: 'interrupted', error: toAgentError(options.error).toInfo() };
  })();
  return {
    outcome: { job, stop, ...(execution ? { execution } : {}) },
    state,
    started: snapshot.createdAt !== undefined,
    ...(plan ? { plan } : {}),
  };
}

/** The ticket a stop waits on (the plan's at the review, the write's at an approval). */
export function stopTicket(stop: JobStop): string | undefined {
  return stop.kind === 'approval' || stop.kind === 'review' ? stop.ticketId : undefined;
}

export function notAt(current: JobOutcome, what: string): AgentError {
  const where =
    current.stop.kind === 'review'
      ? 'waiting for the plan review'
      : current.stop.kind === 'approval'
        ? 'waiting for a write approval'
        : current.job.status;
  return new AgentError(
    'BAD_INPUT',
    `Job ${current.job.id} is not at ${what}: it is ${where}.`,
    'Show the job to see what it waits for.',
  );
}

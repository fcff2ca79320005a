/**
 * A job's plan review in a window: the person's decision (approve, request changes, run as is) and a decision
 * made elsewhere, each resuming the job by ONE path. A decision made here is run by its own step (the ticket's
 * watch stops first, so it is not resumed twice); a decision made elsewhere is resumed once, after any step of
 * this window on the job has ended, unless another driver (the deciding window or CLI) is on it already.
 * Host-pure: the cockpit's Approve and the palette run exactly this, and so do the tests.
 */
import type { Ticket } from '../../core/approvals/ticket';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { StopDecision } from '../../core/jobs/jobRunner';
import type { JobPlanWatch } from './jobPlanWatch';
import type { JobRunners } from './jobRunners';
import type { JobSteps } from './jobSteps';

export type PlanDecisionKind = 'approvePlan' | 'requestChanges' | 'skipReview';

export interface PlanDecisionRequest {
  kind: PlanDecisionKind;
  jobId: string;
  /** The plan ticket the person decided on, as the view showed it (its watch stops). */
  ticketId: string | undefined;
  /** The hash of the plan the view showed; from the palette, absent (the plan as it is now). */
  seenHash: string | undefined;
  /** requestChanges: what should change. */
  feedback?: string;
}

export interface PlanDecisionDeps {
  steps: Pick<JobSteps, 'run'>;
  planWatch: Pick<JobPlanWatch, 'decidingHere'>;
  /** The person at this window (signing with the window's approval key, if any). */
  decider(): Promise<Omit<StopDecision, 'seenHash'>>;
}

const MESSAGES: Record<PlanDecisionKind, string> = {
  approvePlan: 'Plan approved: running its first steps…',
  requestChanges: 'Revising the plan with your feedback…',
  skipReview: 'Running the plan as is…',
};

/** The person's decision at the plan review, run as one step; resolves undefined when the step did not run. */
export async function decidePlanHere(
  deps: PlanDecisionDeps,
  request: PlanDecisionRequest,
): Promise<JobOutcome | undefined> {
  const { kind, jobId } = request;
  const settled = request.ticketId === undefined ? undefined : deps.planWatch.decidingHere(request.ticketId);
  let decided = false;
  try {
    const outcome = await deps.steps.run(
      jobId,
      kind,
      MESSAGES[kind],
      async (runner) => {
        const decision: StopDecision = {
          ...(await deps.decider()),
          ...(request.seenHash !== undefined ? { seenHash: request.seenHash } : {}),
        };
        if (kind === 'approvePlan') return runner.approvePlan(jobId, decision);
        if (kind === 'skipReview') return runner.skipReview(jobId, decision);
        return runner.requestChanges(jobId, request.feedback ?? '', decision);
      },
      true,
    );
    decided = outcome !== undefined;
    return outcome;
  } catch (error) {
    // Refused by the team's policy after the decision was recorded: the ticket is decided; anything else came first.
    decided = (error as { code?: unknown } | undefined)?.code === 'APPROVAL_POLICY';
    throw error;
  } finally {
    settled?.(decided);
  }
}

export interface ElsewhereDeps {
  steps: Pick<JobSteps, 'idle' | 'run'>;
  runners: Pick<JobRunners, 'viewer'>;
}

/**
 * A plan ticket decided elsewhere: once any step of this window on the job has ended, the job goes on as the
 * ticket says when it still waits at that review. Resolves the outcome, or undefined when there was nothing to do.
 */
export async function resumeDecidedElsewhere(
  deps: ElsewhereDeps,
  jobId: string,
  ticket: Ticket,
): Promise<JobOutcome | undefined> {
  await deps.steps.idle(jobId);
  const { stop } = await (await deps.runners.viewer()).outcome(jobId);
  if (stop.kind !== 'review' || stop.ticketId !== ticket.id) return undefined;
  const by = ticket.decisions.at(-1)?.by ?? 'someone';
  return deps.steps.run(
    jobId,
    'continue',
    `Plan decided by ${by}: going on…`,
    (runner) => runner.resumeFromTicket(jobId),
    true,
  );
}

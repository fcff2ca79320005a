/**
 * The review stop (seed 002): the job is pending_review and the graph interrupts until a person decides.
 * Approve (or skip) → tactical phase; request changes → the feedback goes to workspace.md (dated, under
 * "## Review Feedback") and to the agent as a message, then another strategic iteration. Runs twice
 * (before the interrupt and on resume), so nothing before `interrupt()` has effects beyond the status.
 */
import { interrupt } from '@langchain/langgraph';
import { z } from 'zod';
import type { JobGraphDeps } from '../jobGraphDeps';
import { commitJob } from '../jobHistoryCommit';
import type { ReviewDecision } from '../jobState';
import { ensureStatus } from '../jobStatusSync';
import type { JobNode } from './nodeType';

export interface ReviewRequest {
  kind: 'review';
  jobId: string;
  cycle: number;
}

const decisionSchema = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('approve'), by: z.string().min(1), comment: z.string().optional() }),
  z.strictObject({ action: z.literal('skip'), by: z.string().min(1) }),
  z.strictObject({ action: z.literal('revise'), by: z.string().min(1), feedback: z.string().trim().min(1) }),
]);

export function makeReviewGateNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const job = await ensureStatus(deps, state.jobId, 'pending_review', 'plan ready for review');
    deps.emit({ type: 'step', jobId: state.jobId, phase: 'strategic', message: 'Waiting for your review of the plan' });
    const raw: unknown = interrupt<ReviewRequest, unknown>({ kind: 'review', jobId: state.jobId, cycle: job.reviewCycles });
    const parsed = decisionSchema.safeParse(raw);
    if (!parsed.success) {
      deps.logger.warn('ignored a review decision that does not parse; the job stays at review', { jobId: state.jobId });
      return { review: undefined };
    }
    const decision: ReviewDecision = parsed.data;
    const cycle = job.reviewCycles;
    if (decision.action === 'revise') {
      const feedback = decision.feedback?.trim() ?? '';
      await deps.store.appendReviewFeedback(state.jobId, `${feedback}\n\n— ${decision.by}, review cycle ${cycle}`, deps.now());
      await ensureStatus(deps, state.jobId, 'planning', `changes requested by ${decision.by}`);
      await deps.audit(state.jobId, { type: 'review', action: 'revise', by: decision.by, cycle, feedback });
      await commitJob(deps, state.jobId, `Review cycle ${cycle}: changes requested by ${decision.by}`);
      return {
        review: decision,
        messages: [
          {
            role: 'user',
            content: `Review feedback from ${decision.by} (review cycle ${cycle}):\n${feedback}\n\nRevise workspace.md, plan.md and the todos to address every point, then call plan_ready.`,
          },
        ],
      };
    }
    const skipped = decision.action === 'skip';
    await ensureStatus(deps, state.jobId, 'running', skipped ? `review skipped by ${decision.by}` : `plan approved by ${decision.by}`);
    await deps.audit(state.jobId, { type: 'review', action: decision.action, by: decision.by, cycle });
    await commitJob(deps, state.jobId, skipped ? `Review cycle ${cycle}: review skipped by ${decision.by}, run as is` : `Review cycle ${cycle}: plan approved by ${decision.by}`);
    // The tactical phase's opening message tells the agent about the approval.
    return { review: decision };
  };
}

/**
 * The review stop (seed 002): the job is pending_review and the graph interrupts until its plan ticket is
 * decided through the one approval path (approvals/approvalPath.ts): here, in another window, or by a
 * teammate over Redis. Approved → the ticket is used (policy checked, single use) and the tactical phase
 * starts; rejected (request changes) → its comment is the feedback: to workspace.md (dated, under
 * "## Review Feedback") and to the agent, then another strategic iteration. Runs twice (before the
 * interrupt and on resume), so nothing before `interrupt()` has effects beyond the status.
 */
import { interrupt } from '@langchain/langgraph';
import { z } from 'zod';
import { ticketDecision } from '../../../approvals/approvalPath';
import { toAgentError } from '../../../platform/errors';
import type { JobGraphDeps } from '../jobGraphDeps';
import { commitJob } from '../jobHistoryCommit';
import type { ReviewDecision } from '../jobState';
import { ensureStatus } from '../jobStatusSync';
import type { JobNode } from './nodeType';

export interface ReviewRequest {
  kind: 'review';
  jobId: string;
  cycle: number;
  ticketId: string | undefined;
  hash: string | undefined;
}

/** The resume value only labels an approval ("run as is"); the ticket decides. */
const hintSchema = z.object({ skip: z.boolean().optional() });

export function makeReviewGateNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const job = await ensureStatus(deps, state.jobId, 'pending_review', 'plan ready for review');
    deps.emit({ type: 'step', jobId: state.jobId, phase: 'strategic', message: 'Waiting for your review of the plan' });
    const ticketRef = state.planTicket;
    const raw: unknown = interrupt<ReviewRequest, unknown>({
      kind: 'review',
      jobId: state.jobId,
      cycle: job.reviewCycles,
      ticketId: ticketRef?.id,
      hash: ticketRef?.hash,
    });
    if (!ticketRef) {
      deps.logger.warn('the review stop has no plan ticket; the job stays at review', { jobId: state.jobId });
      return { review: undefined };
    }
    const decided = await ticketDecision(deps.ticketStore, ticketRef.id);
    if (!decided) return { review: undefined };
    const cycle = job.reviewCycles;
    if (!decided.approve) {
      const feedback = decided.comment?.trim() || 'Changes requested (no feedback given).';
      const decision: ReviewDecision = { action: 'revise', by: decided.by, feedback };
      await deps.store.appendReviewFeedback(
        state.jobId,
        `${feedback}\n\n— ${decided.by}, review cycle ${cycle}`,
        deps.now(),
      );
      await ensureStatus(deps, state.jobId, 'planning', `changes requested by ${decided.by}`);
      await deps.audit(state.jobId, { type: 'review', action: 'revise', by: decided.by, cycle, feedback });
      await commitJob(deps, state.jobId, `Review cycle ${cycle}: changes requested by ${decided.by}`);
      return {
        review: decision,
        planTicket: undefined,
        messages: [
          {
            role: 'user',
            content: `Review feedback from ${decided.by} (review cycle ${cycle}):\n${feedback}\n\nRevise workspace.md, plan.md and the todos to address every point, then call plan_ready.`,
          },
        ],
      };
    }
    // The plan ticket is used like a write's: policy and signatures checked, once; a refusal leaves it approved.
    try {
      // The policy in force for this database, read now (SPEC §5 3a), not the one captured when the job started.
      const authorize = await deps.authorizeClaim(ticketRef.id);
      const claimed = await deps.ticketStore.claim(ticketRef.id, {
        connection: deps.connectionKey,
        by: decided.by,
        authorize,
      });
      await deps.ticketStore.finish(claimed.id, {
        ok: true,
        by: decided.by,
        comment: 'the job went on with this plan',
      });
    } catch (error) {
      const e = toAgentError(error);
      deps.logger.warn('the approved plan may not run yet; the job stays at review', {
        jobId: state.jobId,
        code: e.code,
        error: e.message,
      });
      deps.emit({ type: 'step', jobId: state.jobId, phase: 'strategic', message: e.message });
      await deps.audit(state.jobId, { type: 'error', node: 'reviewGate', code: e.code, message: e.message });
      return { review: undefined };
    }
    const hint = hintSchema.safeParse(raw);
    const skipped = hint.success && hint.data.skip === true;
    const decision: ReviewDecision = skipped
      ? { action: 'skip', by: decided.by }
      : { action: 'approve', by: decided.by, ...(decided.comment ? { comment: decided.comment } : {}) };
    await ensureStatus(
      deps,
      state.jobId,
      'running',
      skipped ? `review skipped by ${decided.by}` : `plan approved by ${decided.by}`,
    );
    await deps.audit(state.jobId, { type: 'review', action: decision.action, by: decided.by, cycle });
    await commitJob(
      deps,
      state.jobId,
      skipped
        ? `Review cycle ${cycle}: review skipped by ${decided.by}, run as is`
        : `Review cycle ${cycle}: plan approved by ${decided.by}`,
    );
    // The tactical phase's opening message tells the agent about the approval.
    return { review: decision, planTicket: undefined };
  };
}

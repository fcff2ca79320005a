/**
 * The approval stop of a held write: interrupts until a person decides. The decision is recorded on the
 * ticket by the one approval path (approvals/approvalPath.ts) before the job is resumed; on resume the
 * ticket alone says what happens (fail closed: only an APPROVED ticket runs). Runs twice (before the
 * interrupt and on resume), so nothing before `interrupt()` has effects beyond the job's status.
 */
import { interrupt } from '@langchain/langgraph';
import { ticketDecision } from '../../../approvals/approvalPath';
import { ensureStatus } from '../jobStatusSync';
import type { JobGraphDeps } from '../jobGraphDeps';
import type { JobNode } from './nodeType';

export interface WriteApprovalRequest {
  kind: 'approval';
  jobId: string;
  ticketId: string;
  sql: string;
}

export function makeAwaitWriteNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const pending = state.pendingWrite;
    if (!pending) return { writeDecision: { approve: false, by: 'pg-agent', comment: 'no write was pending' } };
    // A write that could not get its locks waits here too (approved already): Continue resumes and it runs again.
    const why = pending.lockWait
      ? `waiting: the approved write could not get its locks (${pending.lockWait}); Continue runs it again`
      : 'waiting for a write approval';
    await ensureStatus(deps, state.jobId, 'running', why);
    interrupt<WriteApprovalRequest, unknown>({
      kind: 'approval',
      jobId: state.jobId,
      ticketId: pending.ticketId,
      sql: pending.sql,
    });
    const decided = await ticketDecision(deps.ticketStore, pending.ticketId);
    const decision = decided ?? {
      approve: false,
      by: 'pg-agent',
      comment: `resumed while ticket ${pending.ticketId} was still waiting for a decision`,
    };
    await deps.audit(state.jobId, {
      type: 'approval',
      ticketId: pending.ticketId,
      approve: decision.approve,
      by: decision.by,
      ...(decision.comment === undefined ? {} : { comment: decision.comment }),
      recorded: decided !== undefined,
    });
    return { writeDecision: decision };
  };
}

/**
 * The approval stop of a held write: interrupts until a person decides. Only the resume value, supplied
 * by a person's action, can approve, and only if the ticket agrees; anything malformed means "not
 * approved". Runs twice (before the interrupt and on resume), so nothing before `interrupt()` has effects.
 */
import { interrupt } from '@langchain/langgraph';
import { z } from 'zod';
import { ensureStatus } from '../jobStatusSync';
import type { JobGraphDeps } from '../jobGraphDeps';
import type { WriteDecisionValue } from '../jobState';
import type { JobNode } from './nodeType';

export interface WriteApprovalRequest {
  kind: 'approval';
  jobId: string;
  ticketId: string;
  sql: string;
}

const resumeSchema = z.strictObject({ approve: z.boolean(), by: z.string().min(1), comment: z.string().optional() });

export function makeAwaitWriteNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const pending = state.pendingWrite;
    if (!pending) return { writeDecision: { approve: false, by: 'pg-agent', comment: 'no write was pending' } };
    await ensureStatus(deps, state.jobId, 'running', 'waiting for a write approval');
    const raw: unknown = interrupt<WriteApprovalRequest, unknown>({ kind: 'approval', jobId: state.jobId, ticketId: pending.ticketId, sql: pending.sql });
    const parsed = resumeSchema.safeParse(raw);
    const asked: WriteDecisionValue = parsed.success
      ? { approve: parsed.data.approve, by: parsed.data.by, ...(parsed.data.comment === undefined ? {} : { comment: parsed.data.comment }) }
      : { approve: false, by: 'pg-agent', comment: 'the resume value was not a decision' };
    let ticket = await deps.ticketStore.get(pending.ticketId);
    let recorded = false;
    if (ticket?.status === 'PENDING_APPROVAL') {
      ticket = await deps.ticketStore.decide(pending.ticketId, { approve: asked.approve, by: asked.by, ...(asked.comment === undefined ? {} : { comment: asked.comment }) });
      recorded = true;
    }
    // Fail closed: the write runs only if the person approved AND the ticket says approved.
    const approve = asked.approve && ticket?.status === 'APPROVED';
    await deps.audit(state.jobId, { type: 'approval', ticketId: pending.ticketId, approve, by: asked.by, ...(asked.comment === undefined ? {} : { comment: asked.comment }), recorded });
    return { writeDecision: { ...asked, approve } };
  };
}

/**
 * Stops the run for a person's decision (`interrupt`). Only the resume value, supplied by a person's
 * action, can approve; anything malformed means "not approved". Runs twice (before the interrupt and on
 * resume), so nothing before `interrupt()` has side effects.
 */
import { interrupt } from '@langchain/langgraph';
import { z } from 'zod';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';
import type { ApprovalDecision } from '../state';

export interface ApprovalRequest {
  ticketId: string;
  sql: string;
  impact: unknown;
}

const resumeSchema = z.object({ approve: z.boolean(), by: z.string().min(1), comment: z.string().optional() });

export function makeAwaitApprovalNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    const ticketId = state.ticketId ?? '';
    const raw: unknown = interrupt<ApprovalRequest, unknown>({ ticketId, sql: state.sql ?? '', impact: state.impact });
    const parsed = resumeSchema.safeParse(raw);
    const asked: ApprovalDecision = parsed.success
      ? { approve: parsed.data.approve, by: parsed.data.by, ...(parsed.data.comment === undefined ? {} : { comment: parsed.data.comment }) }
      : { approve: false, by: 'pg-agent', comment: 'the resume value was not a decision' };
    try {
      let ticket = await deps.ticketStore.get(ticketId);
      let recorded = false;
      if (ticket?.status === 'PENDING_APPROVAL') {
        ticket = await deps.ticketStore.decide(ticketId, { approve: asked.approve, by: asked.by, ...(asked.comment === undefined ? {} : { comment: asked.comment }) });
        recorded = true;
      }
      // Fail closed: the run goes on only if the person approved AND the ticket says approved.
      const approve = asked.approve && ticket?.status === 'APPROVED';
      const decision: ApprovalDecision = { ...asked, approve };
      await deps.audit.record(threadId, { type: 'approval', ticketId, approve, by: asked.by, ...(asked.comment === undefined ? {} : { comment: asked.comment }), recorded });
      return { decision };
    } catch (error) {
      return { decision: { ...asked, approve: false }, error: await failureInfo(deps, threadId, 'awaitApproval', error) };
    }
  };
}

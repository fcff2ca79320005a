/**
 * Stops the run for a person's decision (`interrupt`). The decision is recorded on the ticket by the one
 * approval path (approvals/approvalPath.ts) before the run is resumed; on resume the ticket alone says
 * what happens, so the resume value cannot approve anything. Fail closed: only an APPROVED ticket goes
 * on. Runs twice (before the interrupt and on resume), so nothing before `interrupt()` has side effects.
 */
import { interrupt } from '@langchain/langgraph';
import { ticketDecision } from '../../approvals/approvalPath';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';

export interface ApprovalRequest {
  ticketId: string;
  sql: string;
  impact: unknown;
}

export function makeAwaitApprovalNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    const ticketId = state.ticketId ?? '';
    interrupt<ApprovalRequest, unknown>({ ticketId, sql: state.sql ?? '', impact: state.impact });
    try {
      const decided = await ticketDecision(deps.ticketStore, ticketId);
      const decision = decided ?? {
        approve: false,
        by: 'pg-agent',
        comment: `resumed while ticket ${ticketId} was still waiting for a decision`,
      };
      await deps.audit.record(threadId, {
        type: 'approval',
        ticketId,
        approve: decision.approve,
        by: decision.by,
        ...(decision.comment === undefined ? {} : { comment: decision.comment }),
        recorded: decided !== undefined,
      });
      return { decision };
    } catch (error) {
      return {
        decision: { approve: false, by: 'pg-agent', comment: 'the ticket could not be read' },
        error: await failureInfo(deps, threadId, 'awaitApproval', error),
      };
    }
  };
}

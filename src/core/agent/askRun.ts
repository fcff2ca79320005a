/** Starting and resuming an ask run, and reading where it stopped (answered, held, rejected, failed). */
import { Command } from '@langchain/langgraph';
import type { TicketStore } from '../approvals/ticketStore';
import { AgentError } from '../errors';
import type { AskGraph } from './graph';
import type { AskStateValue, ApprovalDecision } from './state';
import { assertThreadId } from './threadId';

export type AskStatus = 'done' | 'held' | 'rejected' | 'refused' | 'failed';

export interface AskOutcome {
  status: AskStatus;
  threadId: string;
  state: AskStateValue;
}

const config = (threadId: string) => ({ configurable: { thread_id: threadId } });

export async function startAsk(graph: AskGraph, threadId: string, question: string): Promise<AskOutcome> {
  assertThreadId(threadId);
  await graph.invoke({ question }, config(threadId));
  return readOutcome(graph, threadId);
}

/** Resumes a run held at the approval step with a person's decision. */
export async function resumeAsk(graph: AskGraph, threadId: string, decision: ApprovalDecision): Promise<AskOutcome> {
  assertThreadId(threadId);
  const before = await readOutcome(graph, threadId);
  if (before.status !== 'held') return before;
  await graph.invoke(new Command({ resume: decision }), config(threadId));
  return readOutcome(graph, threadId);
}

/**
 * Resumes from the ticket's status, as decided elsewhere (`pg-agent approvals approve/reject`):
 * approved → approve, rejected or expired → reject, still pending → stays held.
 */
export async function resumeFromTicket(graph: AskGraph, store: TicketStore, threadId: string): Promise<AskOutcome> {
  const current = await readOutcome(graph, threadId);
  if (current.status !== 'held' || !current.state.ticketId) return current;
  const ticket = await store.get(current.state.ticketId);
  if (!ticket || ticket.status === 'PENDING_APPROVAL') return current;
  const event = [...ticket.history].reverse().find((e) => e.action === 'approved' || e.action === 'rejected');
  const by = event?.by ?? 'pg-agent';
  return resumeAsk(graph, threadId, { approve: ticket.status === 'APPROVED', by, ...(event?.comment === undefined ? {} : { comment: event.comment }) });
}

export async function readOutcome(graph: AskGraph, threadId: string): Promise<AskOutcome> {
  assertThreadId(threadId);
  const snapshot = await graph.getState(config(threadId));
  if (snapshot.createdAt === undefined) {
    throw new AgentError('BAD_INPUT', `There is no ask run ${threadId} in this workspace.`, 'Check the id, and that --workspace is the folder the run was started in.');
  }
  const state = snapshot.values as AskStateValue;
  const held = snapshot.next.includes('awaitApproval');
  const status: AskStatus = held
    ? 'held'
    : state.error?.code === 'SQL_REFUSED'
      ? 'refused'
      : state.error
        ? 'failed'
        : state.decision && !state.decision.approve
          ? 'rejected'
          : 'done';
  return { status, threadId, state };
}

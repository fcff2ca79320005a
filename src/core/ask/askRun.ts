/** Starting and resuming an ask run, and reading where it stopped (answered, held, rejected, failed). */
import { Command } from '@langchain/langgraph';
import { resumeWhenDecided } from '../approvals/approvalPath';
import type { TicketStore } from '../approvals/ticketStore';
import { AgentError } from '../platform/errors';
import { passwordsAsVerifiers } from '../sql/secrets/textPasswords';
import type { AskGraph } from './graph';
import type { AskStateValue } from './state';
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
  // The question is kept (the run's checkpoints, audit): a password typed in it is kept as its verifier.
  await graph.invoke({ question: passwordsAsVerifiers(question) }, config(threadId));
  return readOutcome(graph, threadId);
}

/**
 * Resumes a run held at the approval step once its ticket is decided (in this process, another window, or
 * by a teammate over Redis: decisions are recorded with approvals/approvalPath.ts); still pending → stays held.
 */
export async function resumeAsk(graph: AskGraph, store: TicketStore, threadId: string): Promise<AskOutcome> {
  assertThreadId(threadId);
  const current = await readOutcome(graph, threadId);
  if (current.status !== 'held' || !current.state.ticketId) return current;
  return resumeWhenDecided(
    store,
    current.state.ticketId,
    async () => {
      await graph.invoke(new Command({ resume: { ticketId: current.state.ticketId } }), config(threadId));
      return readOutcome(graph, threadId);
    },
    () => current,
  );
}

export async function readOutcome(graph: AskGraph, threadId: string): Promise<AskOutcome> {
  assertThreadId(threadId);
  const snapshot = await graph.getState(config(threadId));
  if (snapshot.createdAt === undefined) {
    throw new AgentError(
      'BAD_INPUT',
      `There is no ask run ${threadId} in this workspace.`,
      'Check the id, and that --workspace is the folder the run was started in.',
    );
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

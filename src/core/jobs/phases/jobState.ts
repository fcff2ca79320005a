/** The state of a job's phases graph, checkpointed between steps (keyed by the job id). */
import type { ApprovalDecision } from '../../approvals/approvalPath';
import { Annotation } from '@langchain/langgraph';
import type { ErrorInfo } from '../../../shared/errorCodes';
import type { ChatMessage } from '../../llm/provider';
import type { ImpactReport, TableEffect } from '../../../shared/impactReport';
import type { Usage } from '../../ask/state';
import { NO_USAGE, addUsage } from '../../ask/state';
import type { ColumnSet, TruncatedRead } from './jobWriteFindings';

/** How a phase ended, as the model said (or the cap decided). */
export type PhaseEnd =
  | { kind: 'plan_ready'; summary: string }
  | { kind: 'finish_phase'; summary: string }
  | { kind: 'job_complete'; summary: string }
  | { kind: 'job_failed'; reason: string };

/** A write of the tactical phase waiting for a person: the call that asked for it and its ticket. */
export interface PendingWrite {
  toolCallId: string;
  toolName: string;
  ticketId: string;
  sql: string;
  /** Relative to the job folder: sql/NNN-<slug>.sql. */
  sqlFile: string;
  impact: ImpactReport;
  todoId: string | null;
  /** Calls of the same model turn after this one: answered "not run" once the write is decided. */
  laterCalls: { id: string; name: string }[];
  /**
   * Set when the approved write stopped because others held its locks (LOCK_UNAVAILABLE, issue 25): nothing
   * ran, the ticket is still approved and unspent, and the job waits at this write until Continue runs it again.
   */
  lockWait?: string;
}

export interface ReviewDecision {
  action: 'approve' | 'revise' | 'skip';
  by: string;
  feedback?: string;
  comment?: string;
}

/** The one decision type of every approval (see approvals/approvalPath.ts). */
export type WriteDecisionValue = ApprovalDecision;

/** The plan ticket of the current review cycle: what the person approves (SPEC §5.3). */
export interface PlanTicketRef {
  id: string;
  hash: string;
}

export interface ExecutedWrite {
  ticketId: string;
  rows: number;
  tables: TableEffect[];
  undoFile: string;
}

const replace = <T>(fallback: () => T) => Annotation<T>({ reducer: (_old, next) => next, default: fallback });

/** What is left of a long tool result when its phase ends (rows kept out of later checkpoints). */
export const SPENT_RESULT_CHARS = 600;

/**
 * An update of the conversation: new messages (appended), or, at a phase boundary, `compact`: every tool
 * result so far longer than twice SPENT_RESULT_CHARS is cut to SPENT_RESULT_CHARS with a note (a result
 * cut once stays below that, so a later boundary leaves it alone). The rows a phase read
 * served that phase; carried on, they would be copied into every later checkpoint of the job (each holds
 * the whole conversation) and sent with every later model call. What is worth keeping is in workspace.md.
 */
export type MessagesUpdate = ChatMessage[] | { compact: true };

export function compactToolResults(messages: ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    if (message.role !== 'tool' || message.content.length <= 2 * SPENT_RESULT_CHARS) return message;
    const dropped = message.content.length - SPENT_RESULT_CHARS;
    return {
      ...message,
      content: `${message.content.slice(0, SPENT_RESULT_CHARS)}\n… (${dropped} more characters of this result were dropped from the job's memory when its phase ended; workspace.md holds what was worth keeping)`,
    };
  });
}

export const JobState = Annotation.Root({
  /** The job (and thread) id. */
  jobId: Annotation<string>,
  /** The agent's conversation across phases (system prompts are rebuilt per call from the job files). */
  messages: Annotation<ChatMessage[], MessagesUpdate>({
    reducer: (old, update) => (Array.isArray(update) ? [...old, ...update] : compactToolResults(old)),
    default: () => [],
  }),
  phase: replace<'strategic' | 'tactical'>(() => 'strategic'),
  /** Strategic phases run so far (the current one included). */
  strategicIterations: replace(() => 0),
  /** Tactical phases begun so far; 0 means no tactical work yet (the review stop applies). */
  tacticalPhases: replace(() => 0),
  /** Model calls in the current phase, against the per-phase cap. */
  phaseCalls: replace(() => 0),
  /** Set when the model ended the phase; cleared when the next phase starts. */
  phaseEnd: replace<PhaseEnd | undefined>(() => undefined),
  /** Set by the end of a strategic phase: the plan now stops for the person's review. */
  reviewRequired: replace(() => false),
  /** The write waiting for approval, if any. */
  pendingWrite: replace<PendingWrite | undefined>(() => undefined),
  /** The person's last review decision (resume value of the review stop). */
  review: replace<ReviewDecision | undefined>(() => undefined),
  /** The plan ticket the review stop waits on (created when the plan is ready for review). */
  planTicket: replace<PlanTicketRef | undefined>(() => undefined),
  /** The person's decision on the pending write (resume value of the approval stop). */
  writeDecision: replace<WriteDecisionValue | undefined>(() => undefined),
  /** The last write that ran. */
  lastExecution: replace<ExecutedWrite | undefined>(() => undefined),
  /** Reads of this job cut at the row cap (issue 25: a later write gets a finding and one risk level up). */
  truncatedReads: Annotation<TruncatedRead[], TruncatedRead[]>({
    reducer: (old, more) => [...old, ...more],
    default: () => [],
  }),
  /** Columns executed UPDATEs of this job SET (issue 25: a later write filtering on one is flagged). */
  columnsSet: Annotation<ColumnSet[], ColumnSet[]>({ reducer: (old, more) => [...old, ...more], default: () => [] }),
  /** Why the job failed (final). */
  error: replace<ErrorInfo | undefined>(() => undefined),
  /** Tokens and cost of the job's phases. */
  usage: Annotation<Usage>({ reducer: addUsage, default: () => NO_USAGE }),
});

export type JobStateValue = typeof JobState.State;
export type JobUpdate = typeof JobState.Update;

/**
 * The review chat of a job: the person's companion for reviewing it, with tools scoped to the job folder
 * in tiers switched on by the job's state. History in chat.jsonl, model calls in audit.jsonl.
 */
import type { Usage } from '../agent/state';
import type { JobStore } from '../jobs/jobStore';
import type { LlmProvider } from '../llm/provider';
import type { Logger } from '../logger';
import type { SchemaSnapshot } from '../../shared/schema';
import type { ChatToolUse } from './chatLog';
import type { ReviewTier } from './reviewTiers';

export interface ReviewChatDeps {
  store: JobStore;
  provider: LlmProvider;
  /** The database schema, for the research tier's ranked search; absent when no database is open. */
  loadSnapshot?: () => Promise<SchemaSnapshot>;
  logger: Logger;
  modelTimeoutMs?: number;
  now?: () => Date;
}

export interface ReviewTurnOptions {
  /** The reply's text as the model writes it. */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
  /** The person switched on debugging (the debug tier is on anyway when the job failed). */
  debug?: boolean;
}

export interface ReviewTurn {
  reply: string;
  tools: ChatToolUse[];
  /** Feedback drafted in this turn (for the Request changes box), or null. */
  draftFeedback: string | null;
  /** A plan.md edit proposed in this turn, or null. */
  planEdit: { id: string; summary: string; diff: string } | null;
  usage: Usage;
  tiers: ReviewTier[];
}

export function sendReviewMessage(deps: ReviewChatDeps, jobId: string, text: string, options: ReviewTurnOptions = {}): Promise<ReviewTurn> {
  void deps;
  void jobId;
  void text;
  void options;
  return Promise.reject(new Error('NOT_IMPLEMENTED'));
}

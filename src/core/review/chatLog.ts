/** chat.jsonl of a job: the review chat's history, one record per line, folded into entries for display. */
import type { JobStore } from '../jobs/jobStore';

export interface ChatToolUse {
  name: string;
  args: Record<string, unknown>;
  ok: boolean;
  /** One line for the folded view ("read plan.md", "git diff 3f2a1c0..9b8e7d6 plan.md"). */
  summary: string;
}

export type PlanEditStatus = 'proposed' | 'applied' | 'discarded';

export type ChatEntry =
  | { kind: 'user'; at: string; text: string }
  | { kind: 'assistant'; at: string; text: string; tools: ChatToolUse[] }
  /** Feedback the chat drafted; the person sends it (or edits it) with Request changes. */
  | { kind: 'draft_feedback'; at: string; text: string }
  /** A proposed edit of plan.md, shown as a diff; the person applies or discards it. */
  | { kind: 'plan_edit'; at: string; id: string; summary: string; diff: string; status: PlanEditStatus };

export function readChat(store: JobStore, jobId: string): Promise<ChatEntry[]> {
  void store;
  void jobId;
  return Promise.reject(new Error('NOT_IMPLEMENTED'));
}

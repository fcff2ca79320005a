/** Edits of plan.md proposed by the review chat: kept in chat.jsonl until the person applies or discards them. */
import type { JobStore } from '../jobs/jobStore';

/** Writes the proposed plan.md (if plan.md did not change since the proposal) and commits it in the job history. */
export function applyPlanEdit(store: JobStore, jobId: string, editId: string, by: string): Promise<void> {
  void store;
  void jobId;
  void editId;
  void by;
  return Promise.reject(new Error('NOT_IMPLEMENTED'));
}

export function discardPlanEdit(store: JobStore, jobId: string, editId: string, by: string): Promise<void> {
  void store;
  void jobId;
  void editId;
  void by;
  return Promise.reject(new Error('NOT_IMPLEMENTED'));
}

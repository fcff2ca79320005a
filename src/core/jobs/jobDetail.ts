/**
 * Everything the panel and `pg-agent job show` display about one job, read from its folder: the plan
 * files, the todos, what changed in plan.md since the last review, tokens and cost so far.
 */
import type { Usage } from '../agent/state';
import type { Job } from './job';
import type { JobOutcome, JobStop } from './jobOutcome';
import type { JobStore } from './jobStore';
import type { Todo } from './todos';
import type { HistoryEntry } from './jobHistory';

export interface PlanChange {
  /** Review cycles compared (the plan shown at review `fromCycle` and at review `toCycle`). */
  fromCycle: number;
  toCycle: number;
  /** Unified diff of plan.md; '' when the plan did not change. */
  diff: string;
}

export interface JobDetail {
  job: Job;
  stop: JobStop;
  workspaceMd: string;
  planMd: string;
  /** The parsed todos, or the readable error when todos.yaml does not parse. */
  todos: { ok: true; items: Todo[] } | { ok: false; error: string };
  /** plan.md between the last two reviews; null before the second review. */
  planChange: PlanChange | null;
  /** Every model call of the job so far (phases and review chat), from audit.jsonl. */
  usage: Usage;
  /** Files of the job folder, relative, sorted (the history folder left out). */
  files: string[];
  /** The job's own git history, newest first. */
  history: HistoryEntry[];
}

export function readJobDetail(store: JobStore, outcome: JobOutcome): Promise<JobDetail> {
  void store;
  void outcome;
  return Promise.reject(new Error('NOT_IMPLEMENTED'));
}

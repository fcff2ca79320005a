/**
 * Which tools the review chat has, by the job's state (seed 002 "Tool Access Tiers"). Pure functions, so
 * the rules can be read and tested without a job folder or a model.
 */
import type { JobStatus } from '../jobs/job';

export const REVIEW_TIERS = ['basic', 'research', 'history', 'debug', 'dba'] as const;
export type ReviewTier = (typeof REVIEW_TIERS)[number];

export interface TierInput {
  status: JobStatus;
  /** The job folder has at least one commit in its own history. */
  hasHistory: boolean;
  /** The person asked for debugging (panel toggle, or the message asks for it). */
  debugRequested: boolean;
  /**
   * There is something worth a ranked search: a database schema can be loaded, or the job folder has files
   * beyond the ones every job starts with (see `hasResearchFiles`). Absent counts as false.
   */
  researchMaterial?: boolean;
  /** The job's own database is open for this turn (the DBA read tools need it). Absent counts as false. */
  database?: boolean;
}

/**
 * basic: always. research: when there is research material. history: when the job history has a commit.
 * debug: when the job failed or the person asked for it. dba: when the job's database is open.
 */
export function activeTiers(input: TierInput): ReviewTier[] {
  const on: Record<ReviewTier, boolean> = {
    basic: true,
    research: input.researchMaterial === true,
    history: input.hasHistory,
    debug: input.status === 'failed' || input.debugRequested,
    dba: input.database === true,
  };
  return REVIEW_TIERS.filter((tier) => on[tier]);
}

/** Files every job has from its start (plus the generated tools/*.md): alone they do not call for a ranked search. */
const STARTING_FILES = new Set(['job.json', 'workspace.md', 'plan.md', 'todos.yaml', 'chat.jsonl', 'audit.jsonl']);

/** True when a job folder (paths relative to it, with `/`) holds a file beyond the starting ones and tools/*.md. */
export function hasResearchFiles(paths: readonly string[]): boolean {
  return paths.some((path) => !STARTING_FILES.has(path) && !path.startsWith('tools/'));
}

/**
 * The person asks for debugging in the message itself: it starts with `/debug`, or it asks plainly about
 * the audit trail or about why the job failed. Kept conservative on purpose: a word like "error" alone
 * (as in "error handling in step 2") does not switch the debug tools on.
 */
export function asksForDebugging(text: string): boolean {
  const message = text.trim();
  if (/^\/debug\b/i.test(message)) return true;
  return /\baudit (?:trail|log)\b|\bwhy did (?:it|the (?:job|agent|run)) fail\b|\bwhat went wrong\b/i.test(message);
}

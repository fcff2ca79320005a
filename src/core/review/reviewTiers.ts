/** Which tools the review chat has, by the job's state (seed 002 "Tool Access Tiers"). */
import type { JobStatus } from '../jobs/job';

export const REVIEW_TIERS = ['basic', 'research', 'history', 'debug'] as const;
export type ReviewTier = (typeof REVIEW_TIERS)[number];

export interface TierInput {
  status: JobStatus;
  /** The job folder has at least one commit in its own history. */
  hasHistory: boolean;
  /** The person asked for debugging (panel toggle, or the message asks for it). */
  debugRequested: boolean;
}

export function activeTiers(input: TierInput): ReviewTier[] {
  void input;
  throw new Error('NOT_IMPLEMENTED');
}

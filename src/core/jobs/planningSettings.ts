/**
 * How a job plans: the person's planning settings. A plain type of its own so the graph nodes, the workspace
 * policy and the hosts can name it without importing the runner (that made a type-only import cycle).
 */
export interface PlanningSettings {
  /** Stop for the person's review after the first strategic phase (default true). */
  interactive: boolean;
  /** Soft limit of review cycles: past it the review offers "run as is" (default 5). */
  maxReviewCycles: number;
}

export const DEFAULT_PLANNING: PlanningSettings = { interactive: true, maxReviewCycles: 5 };

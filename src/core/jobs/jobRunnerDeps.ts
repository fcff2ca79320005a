/**
 * What a JobRunner is built from: what lasts as long as the runner (the stores, the settings in force, the
 * checkpointer, the leases) and what one step brings to it (JobStepDeps: the database open now, the model,
 * progress and its Cancel). A window keeps one runner and binds each step with `forStep`; the CLI builds one.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { DecisionRequest } from '../approvals/approvalPath';
import type { RunDeps } from '../ask/runDeps';
import type { JobEvent } from './jobOutcome';
import type { JobLeases } from './jobLease';
import type { JobStore } from './jobStore';
import type { JobSearchIndexer } from './phases/jobGraphDeps';
import type { PlanningSettings } from './planningSettings';

/** Without a provider, starting or continuing a job fails with a clear error. */
export interface JobRunnerDeps extends RunDeps {
  store: JobStore;
  /** .pgagent/checkpoints: the graph's checkpoints, keyed by job id. */
  checkpointsDir: string;
  planning?: Partial<PlanningSettings>;
  /** Time limit of one model call (default 60 s). */
  modelTimeoutMs?: number;
  /** Model calls allowed in one phase before it is ended (default 40). */
  maxModelCallsPerPhase?: number;
  onEvent?: (event: JobEvent) => void;
  /** Cancels the model call in flight (Cancel of a progress notification); the job stays resumable. */
  signal?: AbortSignal;
  /** One driver per job (Redis when configured); default: lock files beside the job folders. */
  leases?: JobLeases;
  /** Team mode's PostgreSQL checkpointer (jobCheckpointer.ts); default: files in checkpointsDir. */
  checkpointer?: BaseCheckpointSaver;
  /** When an embedding model is configured: refreshes the job's index for the review chat's vector_search (review/jobSearchIndex.ts). */
  indexForSearch?: JobSearchIndexer;
}

/** What one step brings to a long-lived runner (JobRunner.forStep); the rest of JobRunnerDeps stays the runner's. */
export type JobStepDeps = Pick<JobRunnerDeps, 'db' | 'connectionKey' | 'provider' | 'loadSnapshot'> &
  Partial<Pick<JobRunnerDeps, 'onEvent' | 'signal' | 'indexForSearch'>>;

export interface NewJobRequest {
  /** The task in the person's words; the first line (shortened) becomes the title unless one is given. */
  task: string;
  title?: string;
  /** Run straight from plan to execution without the review stop (planning.interactive: false for this job). */
  skipReview?: boolean;
}

/** Who decides at a stop of the job (signed when a key is given) and on what they saw: the one approval path's request. */
export type StopDecision = Omit<DecisionRequest, 'approve'>;

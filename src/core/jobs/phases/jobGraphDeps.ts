/** What the nodes of a job's phases graph are given from outside. */
import type { RunDeps } from '../../ask/runDeps';
import type { SchemaSnapshot } from '../../../shared/schema';
import type { JobAuditEvent } from '../jobAudit';
import type { JobEvent } from '../jobOutcome';
import type { JobStore } from '../jobStore';
import type { PlanningSettings } from '../planningSettings';

export interface JobGraphDeps extends RunDeps {
  store: JobStore;
  planning: PlanningSettings;
  modelTimeoutMs: number;
  maxModelCallsPerPhase: number;
  audit: (jobId: string, event: JobAuditEvent) => Promise<void>;
  emit: (event: JobEvent) => void;
  signal: AbortSignal | undefined;
  now: () => Date;
  /** When an embedding model is configured: refreshes the job's index for the review chat's vector_search at each phase boundary. */
  indexForSearch?: JobSearchIndexer;
}

/**
 * Brings a job's search index up to date (review/jobSearchIndex.ts `jobSearchIndexer`); passed in by who builds
 * the runner, because the review chat sits above jobs. A failure is the indexer's to log: it never fails the job.
 */
export type JobSearchIndexer = (store: JobStore, jobId: string, schema: () => Promise<SchemaSnapshot>) => Promise<void>;

/** What the nodes of a job's phases graph are given from outside. */
import type { RunDeps } from '../../ask/runDeps';
import type { SchemaSnapshot } from '../../../shared/schema';
import type { Ticket } from '../../approvals/ticket';
import type { AgentError } from '../../platform/errors';
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
  /**
   * The policy in force for the claim of `ticketId` (SPEC §5 3a: read at the claim, not when the job started):
   * read now, or the one the runner read moments before in this same step to refuse an approval early.
   */
  authorizeClaim: (ticketId: string) => Promise<ClaimAuthorizer>;
  /** When an embedding model is configured: refreshes the job's index for the review chat's vector_search at each phase boundary. */
  indexForSearch?: JobSearchIndexer;
}

/**
 * Brings a job's search index up to date (review/jobSearchIndex.ts `jobSearchIndexer`); passed in by who builds
 * the runner, because the review chat sits above jobs. A failure is the indexer's to log: it never fails the job.
 */
export type JobSearchIndexer = (store: JobStore, jobId: string, schema: () => Promise<SchemaSnapshot>) => Promise<void>;

/** Whether a ticket may be claimed now: undefined when it may, else why not (APPROVAL_POLICY). */
export type ClaimAuthorizer = (ticket: Ticket) => AgentError | undefined;

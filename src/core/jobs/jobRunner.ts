/**
 * Running jobs: creates a job and drives its phases graph from checkpoint to checkpoint, turning each
 * person's action (approve the plan, request changes, approve a write, cancel) into a graph resume.
 * Used by the VS Code host and by `pg-agent job`; every call works in a new process from the files.
 */
import type { TicketStore } from '../approvals/ticketStore';
import type { Db } from '../db/db';
import type { LlmProvider } from '../llm/provider';
import type { Logger } from '../logger';
import type { SafetySettings } from '../sql/safetySettings';
import type { SchemaSnapshot } from '../../shared/schema';
import type { Job } from './job';
import type { JobEvent, JobOutcome } from './jobOutcome';
import type { JobStore } from './jobStore';

export interface PlanningSettings {
  /** Stop for the person's review after the first strategic phase (default true). */
  interactive: boolean;
  /** Soft limit of review cycles: past it the review offers "run as is" (default 5). */
  maxReviewCycles: number;
}

export const DEFAULT_PLANNING: PlanningSettings = { interactive: true, maxReviewCycles: 5 };

export interface JobRunnerDeps {
  store: JobStore;
  /** .pgagent/checkpoints: the graph's checkpoints, keyed by job id. */
  checkpointsDir: string;
  db: Db;
  /** Password-free key of the database (tickets are bound to it). */
  connectionKey: string;
  ticketStore: TicketStore;
  /** Undefined when no model is configured: starting or continuing a job then fails with a clear error. */
  provider: LlmProvider | undefined;
  loadSnapshot: () => Promise<SchemaSnapshot>;
  settings: SafetySettings;
  logger: Logger;
  /** Who started the job (recorded on tickets the job creates). */
  requestedBy: string;
  planning?: Partial<PlanningSettings>;
  /** Time limit of one model call (default 60 s). */
  modelTimeoutMs?: number;
  /** Model calls allowed in one phase before it is ended (default 40). */
  maxModelCallsPerPhase?: number;
  onEvent?: (event: JobEvent) => void;
  /** Cancels the model call in flight (Cancel of a progress notification); the job stays resumable. */
  signal?: AbortSignal;
}

export interface NewJobRequest {
  /** The task in the person's words; the first line (shortened) becomes the title unless one is given. */
  task: string;
  title?: string;
  /** Run straight from plan to execution without the review stop (planning.interactive: false for this job). */
  skipReview?: boolean;
}

export interface WriteDecision {
  approve: boolean;
  by: string;
  comment?: string;
}

export class JobRunner {
  constructor(private readonly deps: JobRunnerDeps) {}
  /** Creates the job folder (status planning) without running anything. */
  create(request: NewJobRequest): Promise<Job> { return notYet(this.deps, request); }
  /** Creates the job and runs it to its first stop (normally the plan review). */
  start(request: NewJobRequest): Promise<JobOutcome> { return notYet(this.deps, request); }
  /** Runs a created or interrupted job from its checkpoint to the next stop; a frozen job is thawed first. */
  continue(jobId: string): Promise<JobOutcome> { return notYet(this.deps, jobId); }
  /** At the plan review: approve, and run the first tactical phase to its next stop. */
  approvePlan(jobId: string, by: string, comment?: string): Promise<JobOutcome> { return notYet(this.deps, jobId, by, comment); }
  /** At the plan review: feedback to workspace.md (dated) and to the agent, another strategic iteration, freeze again. */
  requestChanges(jobId: string, feedback: string, by: string): Promise<JobOutcome> { return notYet(this.deps, jobId, feedback, by); }
  /** At the plan review: run as is (recorded as a skipped review). While planning: do not stop for review this time. */
  skipReview(jobId: string, by: string): Promise<JobOutcome> { return notYet(this.deps, jobId, by); }
  /** At a held write: the person's decision (recorded on the ticket), then the job goes on. */
  decideWrite(jobId: string, decision: WriteDecision): Promise<JobOutcome> { return notYet(this.deps, jobId, decision); }
  /** At a held write decided elsewhere (pg-agent approvals approve/reject, a teammate over Redis): go on accordingly. */
  resumeFromTicket(jobId: string): Promise<JobOutcome> { return notYet(this.deps, jobId); }
  /** Cancels the job (final); a pending ticket of the job is rejected so it can never run. */
  cancel(jobId: string, by: string): Promise<JobOutcome> { return notYet(this.deps, jobId, by); }
  /** Pauses a job (status frozen) after the step in flight. */
  freeze(jobId: string): Promise<JobOutcome> { return notYet(this.deps, jobId); }
  /** Where the job stands (no model call, no database access). */
  outcome(jobId: string): Promise<JobOutcome> { return notYet(this.deps, jobId); }
}

// NOT_IMPLEMENTED: the bodies above are being written; the signatures are final.
function notYet(..._args: unknown[]): Promise<never> {
  return Promise.reject(new Error('NOT_IMPLEMENTED'));
}

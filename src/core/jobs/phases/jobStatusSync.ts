/** Keeps job.json's status in step with the graph; nodes may run twice, so every move is idempotent. */
import { AgentError } from '../../platform/errors';
import type { Job, JobStatus } from '../job';
import type { JobGraphDeps } from './jobGraphDeps';

export async function ensureStatus(deps: JobGraphDeps, jobId: string, to: JobStatus, reason: string): Promise<Job> {
  const job = await deps.store.get(jobId);
  if (job.status === to) return job;
  // job.json's status is the one source of truth for pause and cancel: no step moves a job out of them;
  // only Continue (JobRunner.continue) thaws a paused job.
  if (job.status === 'frozen' || job.status === 'cancelled') throw new JobHaltedError(job.status);
  const next = await deps.store.setStatus(jobId, to, reason);
  deps.emit({ type: 'status', jobId, status: to });
  return next;
}

/** Thrown at a step boundary when the person paused or cancelled the job meanwhile (from any process). */
export class JobHaltedError extends AgentError {
  constructor(status: JobStatus) {
    super('BAD_INPUT', `The job is ${status}; it does not go on.`);
  }
}

/** The job, unless it was paused, cancelled or ended meanwhile. */
export async function activeJob(deps: JobGraphDeps, jobId: string): Promise<Job> {
  const job = await deps.store.get(jobId);
  if (job.status === 'frozen' || job.status === 'cancelled' || job.status === 'completed' || job.status === 'failed')
    throw new JobHaltedError(job.status);
  return job;
}

/**
 * A job's identity and lifecycle (SPEC §4 `job.json`): the schema of the file, the id shape, and the
 * status transitions a job may take, kept as data so the UI and the graph read the same table.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { JOB_ID_PATTERN } from '../../shared/ids';
import { AgentError } from '../platform/errors';

export const JOB_STATUSES = [
  'planning',
  'pending_review',
  'running',
  'completed',
  'failed',
  'cancelled',
  'frozen',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_PHASES = ['strategic', 'tactical'] as const;
export type JobPhase = (typeof JOB_PHASES)[number];

/**
 * Where each status may go. `frozen` is listed with every status it could have been frozen from, but
 * `assertTransition` narrows that to the one status the job was actually frozen from (`frozenFrom`).
 */
export const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  // running = no review this time (interactive: false, review skipped, or a re-plan after tactical work).
  planning: ['pending_review', 'running', 'completed', 'failed', 'cancelled', 'frozen'],
  // planning = changes requested by the reviewer; running = approved.
  pending_review: ['planning', 'running', 'cancelled', 'frozen'],
  running: ['planning', 'completed', 'failed', 'cancelled', 'frozen'],
  frozen: ['planning', 'pending_review', 'running'],
  completed: [],
  failed: [],
  cancelled: [],
};

export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export function newJobId(): string {
  return `job_${randomBytes(8).toString('hex')}`;
}

export function assertJobId(id: string): void {
  if (!JOB_ID_PATTERN.test(id)) {
    throw new AgentError(
      'BAD_INPUT',
      `"${id.slice(0, 60)}" is not a job id.`,
      'Job ids look like job_ followed by 16 hexadecimal digits; copy it from the jobs list.',
    );
  }
}

/**
 * Throws unless a job in `from` may move to `to`. A frozen job may only thaw back to the status it was
 * frozen from, so `frozenFrom` is required when `from` is `frozen`.
 */
export function assertTransition(from: JobStatus, to: JobStatus, frozenFrom?: JobStatus): void {
  if (from === 'frozen') {
    if (frozenFrom === undefined) {
      throw new AgentError(
        'INTERNAL',
        `The job is frozen but does not record the status it was frozen from, so it cannot move to "${to}".`,
      );
    }
    if (to !== frozenFrom) {
      throw new AgentError(
        'BAD_INPUT',
        `A job cannot move from "frozen" to "${to}": it was frozen while "${frozenFrom}" and can only resume as "${frozenFrom}".`,
        `Unfreeze the job first (back to "${frozenFrom}"), then change its status.`,
      );
    }
    return;
  }
  const allowed = JOB_TRANSITIONS[from];
  if (!allowed.includes(to)) {
    const advice =
      allowed.length === 0
        ? `"${from}" is final; start a new job instead.`
        : `From "${from}" a job can move to: ${allowed.join(', ')}.`;
    throw new AgentError('BAD_INPUT', `A job cannot move from "${from}" to "${to}".`, advice);
  }
}

/** A connection key such as `profile-name` or `user@host:5432/db`: never a password. */
const connectionKeySchema = z
  .string()
  .min(1)
  .refine((key) => !/password\s*=/i.test(key) && !/:\/\/[^/@]*:[^/@]*@/.test(key), {
    message: 'must not contain a password',
  });

const isoTimestamp = z.iso.datetime({ offset: true });

export const jobSchema = z
  .strictObject({
    id: z.string().regex(JOB_ID_PATTERN),
    title: z.string().min(1),
    status: z.enum(JOB_STATUSES),
    /** The status a frozen job returns to; present exactly when status is `frozen`. */
    frozenFrom: z.enum(JOB_STATUSES).optional(),
    phase: z.enum(JOB_PHASES),
    reviewCycles: z.number().int().min(0),
    createdAt: isoTimestamp,
    updatedAt: isoTimestamp,
    connection: connectionKeySchema,
    threadId: z.string().min(1).optional(),
    /** Go from plan to execution without stopping for review (planning.interactive: false, or "Skip review"). */
    skipReview: z.boolean().optional(),
  })
  .refine((job) => (job.status === 'frozen') === (job.frozenFrom !== undefined), {
    message: 'frozenFrom must be set exactly when the status is "frozen"',
    path: ['frozenFrom'],
  })
  .refine((job) => job.frozenFrom !== 'frozen', {
    message: 'a job cannot be frozen from "frozen"',
    path: ['frozenFrom'],
  });

export type Job = z.infer<typeof jobSchema>;

const RESTORE_ADVICE =
  'Fix the file at that place, or restore the last committed one: git --git-dir <job folder>/.history --work-tree <job folder> checkout -- job.json. Nothing was overwritten.';

/** job.json text to a Job, with the failing field named in the error. */
export function parseJob(text: string, source = 'job.json'): Job {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message)?.[1];
    const line = position === undefined ? '' : ` (line ${text.slice(0, Number(position)).split('\n').length})`;
    throw new AgentError('CONFIG_INVALID', `${source} is not valid JSON${line}: ${message}`, RESTORE_ADVICE, {
      cause: error,
    });
  }
  const result = jobSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
    throw new AgentError(
      'CONFIG_INVALID',
      `${source} is invalid at ${where}: ${issue?.message ?? 'unknown problem'}.`,
      RESTORE_ADVICE,
    );
  }
  return result.data;
}

/**
 * The job after moving to `to`: `frozenFrom` set or cleared, `updatedAt` stamped, and a review cycle
 * counted each time planning hands the job to the reviewer. Throws if the move is not allowed.
 */
export function transitionJob(job: Job, to: JobStatus, now: Date): Job {
  assertTransition(job.status, to, job.frozenFrom);
  const next: Job = { ...job, status: to, updatedAt: now.toISOString() };
  delete next.frozenFrom;
  if (to === 'frozen') next.frozenFrom = job.status;
  if (to === 'pending_review' && job.status === 'planning') next.reviewCycles = job.reviewCycles + 1;
  return next;
}

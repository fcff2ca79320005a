/**
 * Which of a person's actions apply to a job where it stands: the panel's action bar shows only these,
 * and the host refuses the others, so both read the same table (UX: "no Approve plan while planning").
 */
import type { JobBusyView, JobListItem, JobStatusName, JobStopView, JobView } from './protocol';

export type JobActionName = 'approvePlan' | 'requestChanges' | 'skipReview' | 'pauseJob' | 'cancelJob' | 'continueJob';

/** Steps that drive the job's graph: a Pause stops them at their next step boundary. */
const PAUSABLE: readonly JobBusyView['action'][] = [
  'plan',
  'approvePlan',
  'requestChanges',
  'skipReview',
  'continue',
  'write',
];

const FINAL: readonly JobStatusName[] = ['completed', 'failed', 'cancelled'];

export function isFinalStatus(status: JobStatusName): boolean {
  return FINAL.includes(status);
}

/** The actions of the selected job, from its stop and whether this window is running a step of it. */
export function jobActions(job: Pick<JobView, 'status' | 'stop' | 'busy' | 'approval'>): JobActionName[] {
  if (isFinalStatus(job.status)) return [];
  // While a step runs, a person can only pause it (it stops at its next step) or stop it for good.
  if (job.busy !== null) {
    if (job.busy.action === 'cancel') return [];
    return PAUSABLE.includes(job.busy.action) ? ['pauseJob', 'cancelJob'] : ['cancelJob'];
  }
  switch (job.stop.kind) {
    case 'review':
      return ['approvePlan', 'requestChanges', 'skipReview', 'cancelJob'];
    case 'approval': {
      // The write itself is decided in its CodeLens or the Impact tab. Decided elsewhere (a teammate, the
      // CLI) or failed, it is no longer pending here: Continue lets the job go on accordingly.
      const card = job.approval?.status;
      return card === 'pending' || card === 'running' || card === 'stale'
        ? ['cancelJob']
        : ['continueJob', 'cancelJob'];
    }
    case 'interrupted':
      // Planning or running with no step here: maybe a run in another process (pg-agent job), which Pause stops.
      return ['continueJob', 'pauseJob', 'cancelJob'];
    case 'frozen':
      return ['continueJob', 'cancelJob'];
    case 'completed':
    case 'failed':
    case 'cancelled':
      return [];
  }
}

/**
 * A guess from job.json alone (no stop read), for the palette's "which job?" pick: jobs that may
 * accept the action. The host checks the real stop before acting.
 */
export function mayAccept(item: Pick<JobListItem, 'status' | 'busy'>, action: JobActionName): boolean {
  if (isFinalStatus(item.status)) return false;
  switch (action) {
    case 'approvePlan':
    case 'requestChanges':
    case 'skipReview':
      return item.status === 'pending_review' && !item.busy;
    case 'continueJob':
      return item.status !== 'pending_review' && !item.busy;
    case 'pauseJob':
      return item.status === 'planning' || item.status === 'running';
    case 'cancelJob':
      return true;
  }
}

/** Short text of a status (badges, pickers); where a job stands as a whole is `jobStateText`. */
export const JOB_STATUS_TEXT: Readonly<Record<JobStatusName, string>> = {
  planning: 'planning',
  pending_review: 'pending review',
  running: 'running',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  frozen: 'paused',
};

/**
 * Where a job stands, in one short text: the side panel's job list and the status bar both show this one, so they
 * never disagree about the same job ("running" in one, "waiting for approval" in the other). `busy`: this window's
 * step on it (its action), true when it only works on it (a chat reply); `stop`: why it is not running, when the
 * job was read in full. A finished job says its status whatever its last stop was.
 */
export function jobStateText(job: {
  status: JobStatusName;
  busy?: JobBusyView['action'] | boolean | null;
  stop?: JobStopView['kind'] | null;
}): string {
  if (job.busy === 'plan' || job.busy === 'requestChanges') return 'planning…';
  if (job.busy === true || job.busy === 'chat' || job.busy === 'planEdit') return 'working…';
  if (job.busy) return 'running…';
  if (!isFinalStatus(job.status)) {
    if (job.stop === 'review') return 'waiting for review';
    if (job.stop === 'approval') return 'waiting for approval';
  }
  return JOB_STATUS_TEXT[job.status];
}

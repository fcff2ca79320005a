/** The end of a job that cannot be done (job_failed, or past its limits): status failed (final), the reason kept. */
import type { JobGraphDeps } from '../jobGraphDeps';
import { commitJob } from '../jobHistoryCommit';
import { ensureStatus } from '../jobStatusSync';
import type { JobNode } from './nodeType';

export function makeFailJobNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const reason = state.phaseEnd?.kind === 'job_failed' ? state.phaseEnd.reason : 'the job ended without completing';
    await ensureStatus(deps, state.jobId, 'failed', reason);
    await deps.audit(state.jobId, { type: 'error', node: 'failJob', code: 'JOB_FAILED', message: reason });
    await commitJob(deps, state.jobId, `Job failed: ${reason}`);
    return {
      error: {
        code: 'JOB_FAILED',
        message: reason,
        advice:
          'Ask the review chat what went wrong (it can read the audit trail), then start a new job with what you learned.',
      },
    };
  };
}

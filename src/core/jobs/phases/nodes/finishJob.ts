/** The two ends of a job: completed (job_complete) or failed (job_failed, or past its limits). Final. */
import type { JobGraphDeps } from '../jobGraphDeps';
import { commitJob } from '../jobHistoryCommit';
import { ensureStatus } from '../jobStatusSync';
import type { JobNode } from './nodeType';

export function makeCompleteJobNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const summary = state.phaseEnd?.kind === 'job_complete' ? state.phaseEnd.summary : 'done';
    const workspace = await deps.store.readFile(state.jobId, 'workspace.md');
    await deps.store.writeFile(state.jobId, 'workspace.md', `${workspace.trimEnd()}\n\n## Outcome\n\n${summary}\n`);
    await ensureStatus(deps, state.jobId, 'completed', summary);
    await commitJob(deps, state.jobId, `Job completed: ${summary}`);
    deps.emit({ type: 'step', jobId: state.jobId, phase: state.phase, message: 'Completed' });
    return {};
  };
}

export function makeFailJobNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const reason = state.phaseEnd?.kind === 'job_failed' ? state.phaseEnd.reason : 'the job ended without completing';
    await ensureStatus(deps, state.jobId, 'failed', reason);
    await deps.audit(state.jobId, { type: 'error', node: 'failJob', code: 'JOB_FAILED', message: reason });
    await commitJob(deps, state.jobId, `Job failed: ${reason}`);
    return { error: { code: 'JOB_FAILED', message: reason, advice: 'Ask the review chat what went wrong (it can read the audit trail), then start a new job with what you learned.' } };
  };
}

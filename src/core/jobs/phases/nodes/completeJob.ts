/** The end of a job the agent called job_complete on: the outcome in workspace.md, status completed (final). */
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

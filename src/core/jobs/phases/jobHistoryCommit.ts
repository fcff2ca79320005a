/** A commit in the job's own history that never breaks the job: a failure is logged and the job goes on. */
import type { JobGraphDeps } from './jobGraphDeps';
import { commitAll, initHistory } from '../jobHistory';

export async function commitJob(
  deps: Pick<JobGraphDeps, 'store' | 'logger'>,
  jobId: string,
  message: string,
): Promise<void> {
  try {
    const dir = deps.store.jobDir(jobId);
    await initHistory(dir);
    await commitAll(dir, message);
  } catch (error) {
    deps.logger.warn('job history commit failed; the job goes on without it', {
      jobId,
      message,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

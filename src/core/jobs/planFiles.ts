/** The files a job's plan ticket is bound to (plan.md and todos.yaml), as they are now. */
import type { PlanFiles } from '../approvals/planTicket';
import { AgentError } from '../platform/errors';
import type { JobStore } from './jobStore';

export async function readPlanFiles(store: JobStore, jobId: string): Promise<PlanFiles> {
  const read = async (file: string) => {
    try {
      return await store.readFile(jobId, file);
    } catch (error) {
      // A plan without todos yet is still a plan; a file that cannot be read for another reason is an error.
      if (error instanceof AgentError && error.code === 'BAD_INPUT' && error.message.includes('has no file')) return '';
      throw error;
    }
  };
  return { jobId, planMd: await read('plan.md'), todosYaml: await read('todos.yaml') };
}

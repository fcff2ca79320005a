/** The AgentError a piece of our code fails with, for a test to assert its code and message. */
import { AgentError } from '../../src/core/platform/errors';

/** What `fn` throws; any other error is thrown on, and returning normally fails the test. */
export function thrownBy(fn: () => unknown): AgentError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw error;
  }
  throw new Error('expected an AgentError');
}

/** What `work` rejects with; any other error is thrown on, and resolving fails the test. */
export async function rejectionOf(work: () => Promise<unknown>): Promise<AgentError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw error;
  }
  throw new Error('expected an AgentError');
}

/**
 * Fencing for job state: while a runner drives a job, each write of the job's files and checkpoints first
 * checks that the runner still holds the job's lease, so a driver that lost it (stale, taken over) stops
 * before it overwrites what the new driver wrote.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { JobStore } from './jobStore';

export type LeaseGuard = (jobId: string) => Promise<void>;

/** JobStore methods that change a job's files; each takes the job id first. */
const WRITES = new Set<string | symbol>(['setStatus', 'update', 'writeFile', 'appendJsonl', 'appendReviewFeedback', 'nextSqlFile']);

export function guardJobStore(store: JobStore, guard: LeaseGuard): JobStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (!WRITES.has(property) || typeof value !== 'function') return value;
      return async (jobId: string, ...rest: unknown[]) => {
        await guard(jobId);
        return (value as (...args: unknown[]) => unknown).call(target, jobId, ...rest);
      };
    },
  });
}

/** The same check before each checkpoint write (the thread id is the job id). */
export function guardCheckpointer<T extends BaseCheckpointSaver>(saver: T, guard: LeaseGuard): T {
  const threadOf = (config: { configurable?: Record<string, unknown> }): string => {
    const id = config.configurable?.thread_id;
    return typeof id === 'string' ? id : '';
  };
  const put = saver.put.bind(saver);
  const putWrites = saver.putWrites.bind(saver);
  saver.put = async (config, ...rest) => {
    await guard(threadOf(config));
    return put(config, ...rest);
  };
  saver.putWrites = async (config, ...rest) => {
    await guard(threadOf(config));
    return putWrites(config, ...rest);
  };
  return saver;
}

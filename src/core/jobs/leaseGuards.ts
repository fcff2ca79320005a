/**
 * Fencing for job state: while a runner drives a job, each write of the job's files and checkpoints first
 * checks that the runner still holds the job's lease, so a driver that lost it (stale, taken over) stops
 * before it overwrites what the new driver wrote.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { JobStore } from './jobStore';

export type LeaseGuard = (jobId: string) => Promise<void>;

/** JobStore methods that change a job's files; each takes the job id first. */
const WRITES = new Set<string | symbol>([
  'setStatus',
  'update',
  'writeFile',
  'appendJsonl',
  'appendReviewFeedback',
  'nextSqlFile',
]);

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

/** The same check before each checkpoint write (the thread id is the job id); the saver itself is not changed. */
export function guardCheckpointer<T extends BaseCheckpointSaver>(saver: T, guard: LeaseGuard): T {
  const threadOf = (config: { configurable?: Record<string, unknown> } | undefined): string => {
    const id = config?.configurable?.thread_id;
    return typeof id === 'string' ? id : '';
  };
  return new Proxy(saver, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if ((property !== 'put' && property !== 'putWrites') || typeof value !== 'function') return value;
      return async (config: { configurable?: Record<string, unknown> }, ...rest: unknown[]) => {
        await guard(threadOf(config));
        return (value as (...args: unknown[]) => unknown).call(target, config, ...rest);
      };
    },
  });
}

/** Retries of model calls: exponential backoff with jitter, Retry-After honoured, abortable waits. */
import type { Logger } from '../platform/logger';
import { LlmError, llmErrors } from './llmError';

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** First backoff delay; doubled per retry (default 500 ms). */
  baseDelayMs?: number;
  /** Longest wait, also the cap of a provider's Retry-After (default 30 s). */
  maxDelayMs?: number;
  signal?: AbortSignal;
  logger?: Logger;
}

const NEVER_RETRIED = new Set(['cancelled', 'invalid_key', 'missing_key', 'safety_block', 'invalid_output', 'timeout']);

export function isRetryable(error: unknown): error is LlmError {
  return error instanceof LlmError && error.retryable && !NEVER_RETRIED.has(error.kind);
}

/** Runs fn, retrying retryable LlmErrors; the last error is thrown when retries run out. */
export async function withRetries<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const maxRetries = options.maxRetries ?? 3;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (!isRetryable(error) || attempt >= maxRetries) throw error;
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
      // Full jitter on the upper half keeps parallel callers apart without waiting less than half the backoff.
      const jittered = backoff / 2 + Math.random() * (backoff / 2);
      const delayMs = Math.round(
        error.retryAfterMs === undefined ? jittered : Math.min(maxDelayMs, error.retryAfterMs),
      );
      options.logger?.warn('model call failed, retrying', {
        provider: error.provider,
        kind: error.kind,
        status: error.status,
        attempt: attempt + 1,
        delayMs,
      });
      await abortableSleep(delayMs, options.signal, () => llmErrors.cancelled(error.provider, error));
    }
  }
}

/** Waits ms, rejecting with onAbort() as soon as the signal aborts. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(onAbort());
      return;
    }
    const abort = (): void => {
      clearTimeout(timer);
      reject(onAbort());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/**
 * One model call with its retries, as both providers make it: `attempt` gets the text callback (for
 * streams) and the attempt number; once a stream has shown text it is not restarted, since text a
 * person has seen cannot be taken back.
 */
export function retryingCall<T>(
  signal: AbortSignal | undefined,
  onText: ((delta: string) => void) | undefined,
  attempt: (emit: ((delta: string) => void) | undefined, attemptNumber: number) => Promise<T>,
  options: { maxRetries?: number; retryBaseDelayMs?: number; logger?: Logger },
): Promise<T> {
  let delivered = false;
  const emit = onText
    ? (delta: string): void => {
        delivered = true;
        onText(delta);
      }
    : undefined;
  return withRetries(
    async (n) => {
      try {
        return await attempt(emit, n);
      } catch (error) {
        throw delivered && error instanceof LlmError ? error.notRetryable() : error;
      }
    },
    {
      maxRetries: options.maxRetries ?? 3,
      baseDelayMs: options.retryBaseDelayMs ?? 500,
      ...(signal ? { signal } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    },
  );
}

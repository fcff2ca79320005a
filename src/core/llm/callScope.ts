/** One attempt's abort signal: the caller's cancellation plus the per-attempt time limit, told apart. */

export const DEFAULT_TIMEOUT_MS = 60_000;

export interface CallScope {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** True when the time limit (not the caller) aborted the attempt. */
  timedOut(): boolean;
  /** True when the caller cancelled. */
  cancelled(): boolean;
  dispose(): void;
}

export function openCallScope(callerSignal: AbortSignal | undefined, timeoutMs = DEFAULT_TIMEOUT_MS): CallScope {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onCallerAbort = (): void => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    timeoutMs,
    timedOut: () => timedOut && !(callerSignal?.aborted ?? false),
    cancelled: () => callerSignal?.aborted ?? false,
    dispose: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

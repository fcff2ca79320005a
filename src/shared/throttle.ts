/**
 * At most one call per interval, the last request never dropped: for pushing panel snapshots while a
 * reply streams in or a job writes many files, without flooding the webview; for the guard's status file
 * while hundreds of clients connect.
 */
export interface Throttled {
  /** Runs now if the interval has passed, else once at its end. */
  request(): void;
  /** Runs a pending call now. */
  flush(): void;
  dispose(): void;
}

export function throttle(run: () => void, intervalMs: number, now: () => number = Date.now): Throttled {
  let last = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fire = () => {
    timer = undefined;
    last = now();
    run();
  };
  return {
    request() {
      if (timer !== undefined) return;
      const wait = last + intervalMs - now();
      if (wait <= 0) fire();
      else timer = setTimeout(fire, wait);
    },
    flush() {
      if (timer === undefined) return;
      clearTimeout(timer);
      fire();
    },
    dispose() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

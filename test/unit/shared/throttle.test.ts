import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { throttle } from '../../../src/shared/throttle';

describe('throttle (panel pushes while a reply streams)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs the first request at once and folds a burst into one trailing run', () => {
    let runs = 0;
    const t = throttle(() => runs++, 100);
    t.request();
    expect(runs).toBe(1);
    for (let i = 0; i < 50; i++) t.request();
    expect(runs).toBe(1);
    vi.advanceTimersByTime(100);
    expect(runs).toBe(2);
    vi.advanceTimersByTime(1000);
    expect(runs).toBe(2);
  });

  it('never drops the last request, and flush runs a pending one now', () => {
    let runs = 0;
    const t = throttle(() => runs++, 100);
    t.request();
    t.request();
    t.flush();
    expect(runs).toBe(2);
    t.flush();
    expect(runs).toBe(2);
  });

  it('runs nothing after dispose', () => {
    let runs = 0;
    const t = throttle(() => runs++, 100);
    t.request();
    t.request();
    t.dispose();
    vi.advanceTimersByTime(500);
    expect(runs).toBe(1);
  });
});

/** The guard's passed reads in the history: the first of a shape at once, the rest of the window as one count. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HistoryRun } from '../../../src/core/sql/history/queryHistory';
import { RepeatedReads } from '../../../src/guard/metrics/repeatedReads';

describe('RepeatedReads', () => {
  let runs: HistoryRun[];
  let reads: RepeatedReads;
  beforeEach(() => {
    vi.useFakeTimers();
    runs = [];
    reads = new RepeatedReads((run) => runs.push(run), 1000);
  });
  afterEach(() => vi.useRealTimers());

  it('records the first read of a shape at once and the others of the window as one entry when it ends', () => {
    reads.passed('SELECT * FROM t WHERE id = 1', 'app');
    expect(runs).toEqual([expect.objectContaining({ kind: 'read', sql: 'SELECT * FROM t WHERE id = 1', who: 'app' })]);
    for (let id = 2; id <= 5; id++) reads.passed(`SELECT * FROM t WHERE id = ${id}`, 'app');
    expect(runs).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(runs).toHaveLength(2);
    expect(runs[1]).toMatchObject({ sql: 'SELECT * FROM t WHERE id = 2', who: 'app', repeats: 4 });
    // A new window: the shape is recorded at once again.
    reads.passed('SELECT * FROM t WHERE id = 9', 'app');
    expect(runs).toHaveLength(3);
    expect(runs[2]?.repeats).toBeUndefined();
  });

  it('keeps users and shapes apart, and another string literal is another shape', () => {
    reads.passed('SELECT 1', 'app');
    reads.passed('SELECT 2', 'report');
    reads.passed("SELECT * FROM t WHERE name = 'a'", 'app');
    reads.passed("SELECT * FROM t WHERE name = 'b'", 'app');
    expect(runs.map((r) => r.sql)).toEqual([
      'SELECT 1',
      'SELECT 2',
      "SELECT * FROM t WHERE name = 'a'",
      "SELECT * FROM t WHERE name = 'b'",
    ]);
    reads.flush();
    expect(runs).toHaveLength(4);
  });

  it('flush at the stop writes the counts of an open window, once', () => {
    reads.passed('SELECT 1', 'app');
    reads.passed('SELECT 2', 'app');
    reads.flush();
    reads.flush();
    vi.advanceTimersByTime(5000);
    expect(runs.map((r) => r.repeats)).toEqual([undefined, 1]);
  });
});

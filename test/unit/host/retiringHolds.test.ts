import { describe, expect, it } from 'vitest';
import { RetiringHolds } from '../../../src/host/connection/retiringHolds';

describe('RetiringHolds (a database switched while a job step runs on it)', () => {
  it('closes a resource retired under running work only when the last work on it ends', async () => {
    const closed: string[] = [];
    const holds = new RetiringHolds<string>((r) => {
      closed.push(r);
      return Promise.resolve();
    });
    let finishStep!: () => void;
    const step = holds.use('old-db', () => new Promise<void>((resolve) => (finishStep = resolve)));
    const ask = holds.use('old-db', () => Promise.resolve('done'));
    expect(await ask).toBe('done');
    expect(await holds.retire('old-db')).toBe(1); // the step still holds it
    expect(closed).toEqual([]);
    finishStep();
    await step;
    expect(closed).toEqual(['old-db']);
  });

  it('closes an unheld resource at once, and a failing work still releases its hold', async () => {
    const closed: string[] = [];
    const holds = new RetiringHolds<string>((r) => {
      closed.push(r);
      return Promise.resolve();
    });
    expect(await holds.retire('idle-db')).toBe(0);
    expect(closed).toEqual(['idle-db']);
    const failing = holds.use('busy-db', () => Promise.reject(new Error('step failed')));
    await holds.retire('busy-db');
    await expect(failing).rejects.toThrow('step failed');
    expect(closed).toEqual(['idle-db', 'busy-db']);
  });
});

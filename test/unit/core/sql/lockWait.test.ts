// Issue 25: the pauses between an approved DDL's lock tries, and how a session in the way reads.
import { describe, expect, it } from 'vitest';
import { pauseBeforeRetry } from '../../../../src/core/sql/ddl/lockWait';
import { describeDuration, describeLockHolder } from '../../../../src/shared/lockPhrases';

describe('pauses between lock tries', () => {
  const policy = { timeoutMs: 100, attempts: 10 };

  it('double from the wait itself, with jitter between half and all of it', () => {
    expect([1, 2, 3, 4].map((n) => pauseBeforeRetry(n, policy, () => 1))).toEqual([100, 200, 400, 800]);
    expect([1, 2, 3, 4].map((n) => pauseBeforeRetry(n, policy, () => 0))).toEqual([50, 100, 200, 400]);
  });

  it('are capped (2 s unless told)', () => {
    expect(pauseBeforeRetry(9, policy, () => 1)).toBe(2000);
    expect(pauseBeforeRetry(9, { ...policy, maxPauseMs: 500 }, () => 1)).toBe(500);
  });
});

describe('a session in the way, in words', () => {
  const holder = {
    pid: 4242,
    table: 'public.orders',
    mode: 'ACCESS SHARE',
    granted: true,
    user: 'app',
    state: 'idle in transaction',
    stateSeconds: 720,
    transactionSeconds: 725,
    query: 'SELECT * FROM orders',
  };

  it('names the pid, user, state and for how long, the lock and the query', () => {
    expect(describeLockHolder(holder)).toBe(
      'pid 4242 (user app, idle in transaction for 12 min, transaction open 12 min, holds ACCESS SHARE on public.orders; query: SELECT * FROM orders)',
    );
  });

  it('says so for a prepared transaction and a waiter', () => {
    expect(
      describeLockHolder({
        ...holder,
        pid: null,
        user: null,
        state: 'prepared transaction',
        stateSeconds: null,
        transactionSeconds: null,
        query: null,
        granted: false,
        mode: 'SHARE',
      }),
    ).toBe('a prepared transaction (prepared transaction, waits for SHARE on public.orders)');
  });

  it('durations read as seconds, minutes, hours', () => {
    expect([3, 59, 60, 3600, 3900].map(describeDuration)).toEqual(['3 s', '59 s', '1 min', '1 h', '1 h 5 min']);
  });
});

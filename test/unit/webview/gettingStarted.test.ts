import { describe, expect, it } from 'vitest';
import type { ApprovalView, JobListItem, RecentAskView, WaitingView } from '../../../src/shared/protocol';
import { showGettingStarted } from '../../../webview/panel/gettingStarted';

const empty = {
  hasProfiles: false,
  hasApiKey: false,
  jobs: [] as JobListItem[],
  answer: null,
  approvals: [] as ApprovalView[],
  results: null,
  recentAsks: [] as RecentAskView[],
  waiting: [] as WaitingView[],
};

describe('the first-minute help in the side panel', () => {
  it('shows while there is nothing else, and not once a job, an ask, something waiting, an approval or rows are there', () => {
    expect(showGettingStarted(empty)).toBe(true);
    expect(showGettingStarted({ ...empty, jobs: [{} as JobListItem] })).toBe(false);
    expect(showGettingStarted({ ...empty, approvals: [{} as ApprovalView] })).toBe(false);
    expect(showGettingStarted({ ...empty, recentAsks: [{} as RecentAskView] })).toBe(false);
    expect(showGettingStarted({ ...empty, waiting: [{} as WaitingView] })).toBe(false);
    expect(
      showGettingStarted({
        ...empty,
        results: { sql: 'SELECT 1', columns: 1, rowCount: 0, truncated: false, elapsedMs: 1 },
      }),
    ).toBe(false);
  });

  it('is gone for good once there is a connection profile and an API key', () => {
    expect(showGettingStarted({ ...empty, hasProfiles: true, hasApiKey: true })).toBe(false);
    expect(showGettingStarted({ ...empty, hasProfiles: true })).toBe(true);
  });
});

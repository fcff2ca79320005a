import { describe, expect, it } from 'vitest';
import { JOB_STATUSES } from '../../../../src/core/jobs/job';
import { activeTiers, asksForDebugging, hasResearchFiles } from '../../../../src/core/review/reviewTiers';

const base = { status: 'pending_review', hasHistory: false, debugRequested: false } as const;

describe('review chat tool tiers', () => {
  it('gives only the basic tier to a job under review with no history, no research material and no debugging', () => {
    expect(activeTiers(base)).toEqual(['basic']);
  });

  it('always includes the basic tier, whatever the status', () => {
    for (const status of JOB_STATUSES) expect(activeTiers({ ...base, status })).toContain('basic');
  });

  it('switches the debug tier on for a failed job, and only for failed among the statuses', () => {
    const withDebug = JOB_STATUSES.filter((status) => activeTiers({ ...base, status }).includes('debug'));
    expect(withDebug).toEqual(['failed']);
  });

  it('switches the debug tier on when the person asks, for any status', () => {
    for (const status of JOB_STATUSES)
      expect(activeTiers({ ...base, status, debugRequested: true })).toContain('debug');
  });

  it('switches the history tier on only when the job history has a commit', () => {
    expect(activeTiers({ ...base, hasHistory: false })).not.toContain('history');
    expect(activeTiers({ ...base, hasHistory: true })).toEqual(['basic', 'history']);
  });

  it('switches the research tier on only with research material (absent counts as none)', () => {
    expect(activeTiers({ ...base, researchMaterial: false })).not.toContain('research');
    expect(activeTiers({ ...base, researchMaterial: true })).toEqual(['basic', 'research']);
  });

  it('lists every tier in a fixed order when all are on', () => {
    expect(activeTiers({ status: 'failed', hasHistory: true, debugRequested: false, researchMaterial: true })).toEqual([
      'basic',
      'research',
      'history',
      'debug',
    ]);
  });
});

describe('research material in a job folder', () => {
  it('does not count the files every job starts with, nor the generated tool docs', () => {
    expect(
      hasResearchFiles([
        'job.json',
        'workspace.md',
        'plan.md',
        'todos.yaml',
        'chat.jsonl',
        'audit.jsonl',
        'tools/run_sql.md',
        'tools/write_plan.md',
      ]),
    ).toBe(false);
    expect(hasResearchFiles([])).toBe(false);
  });

  it('counts SQL, impact reports and any other document', () => {
    expect(hasResearchFiles(['plan.md', 'sql/001-archive.sql'])).toBe(true);
    expect(hasResearchFiles(['plan.md', 'impact/001.json'])).toBe(true);
    expect(hasResearchFiles(['plan.md', 'notes/requirements.md'])).toBe(true);
  });
});

describe('asking for debugging in a message', () => {
  it('recognises the /debug command at the start of the message', () => {
    expect(asksForDebugging('/debug why is step 3 there?')).toBe(true);
    expect(asksForDebugging('  /DEBUG')).toBe(true);
  });

  it('recognises plain questions about the audit trail or a failure', () => {
    expect(asksForDebugging('Show me the audit trail of the last phase')).toBe(true);
    expect(asksForDebugging('Why did the job fail?')).toBe(true);
    expect(asksForDebugging('what went wrong here')).toBe(true);
  });

  it('stays off for ordinary review questions, even with words like error or debug inside other words', () => {
    expect(asksForDebugging('What does step 2 do about error handling?')).toBe(false);
    expect(asksForDebugging('Is /debug mentioned in the plan?')).toBe(false);
    expect(asksForDebugging('Could the plan fail on big tables?')).toBe(false);
    expect(asksForDebugging('/debugger is not a command')).toBe(false);
  });
});

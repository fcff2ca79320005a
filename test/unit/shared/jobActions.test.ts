import { describe, expect, it } from 'vitest';
import { jobActions, jobStateText, mayAccept } from '../../../src/shared/jobActions';
import type { ApprovalView, JobView } from '../../../src/shared/protocol';
import { impactView } from '../../support/impactReports';

type Input = Parameters<typeof jobActions>[0];
const review: JobView['stop'] = {
  kind: 'review',
  cycle: 1,
  maxReviewCycles: 5,
  overLimit: false,
  ticketId: null,
  planHash: null,
};
const approvalStop: JobView['stop'] = {
  kind: 'approval',
  ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa',
  sqlFile: 'sql/001-x.sql',
  todoId: 't1',
};

function card(status: ApprovalView['status']): ApprovalView {
  return {
    ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa',
    sql: 'UPDATE products SET stock_quantity = 0 WHERE id = 1',
    status,
    impact: impactView({ estimatedRows: 1, exactRows: 1, previewMs: 3 }),
  };
}

function job(change: Partial<Input>): Input {
  return { status: 'pending_review', stop: review, busy: null, approval: null, ...change };
}

describe('jobActions: what the action bar offers', () => {
  it('offers the review decisions only while the plan waits for review', () => {
    expect(jobActions(job({}))).toEqual(['approvePlan', 'requestChanges', 'skipReview', 'cancelJob']);
  });

  it('offers only Pause and Cancel while this window runs a step (no Approve plan while planning)', () => {
    expect(
      jobActions(
        job({
          status: 'planning',
          stop: { kind: 'interrupted', error: null },
          busy: { action: 'plan', message: 'Planning…' },
        }),
      ),
    ).toEqual(['pauseJob', 'cancelJob']);
    expect(jobActions(job({ busy: { action: 'requestChanges', message: 'Revising…' } }))).toEqual([
      'pauseJob',
      'cancelJob',
    ]);
    expect(jobActions(job({ status: 'running', busy: { action: 'write', message: 'Running the write…' } }))).toEqual([
      'pauseJob',
      'cancelJob',
    ]);
    // Once a pause was asked for, or for work that is not a step of the job, only Cancel is left.
    expect(
      jobActions(job({ status: 'planning', busy: { action: 'pause', message: 'Pausing after the current step…' } })),
    ).toEqual(['cancelJob']);
    expect(jobActions(job({ busy: { action: 'planEdit', message: 'Applying the plan edit…' } }))).toEqual([
      'cancelJob',
    ]);
    expect(jobActions(job({ busy: { action: 'cancel', message: 'Cancelling…' } }))).toEqual([]);
  });

  it('leaves a pending write to its approval card, and offers Continue once it was decided elsewhere', () => {
    expect(jobActions(job({ status: 'running', stop: approvalStop, approval: card('pending') }))).toEqual([
      'cancelJob',
    ]);
    expect(jobActions(job({ status: 'running', stop: approvalStop, approval: card('running') }))).toEqual([
      'cancelJob',
    ]);
    expect(jobActions(job({ status: 'running', stop: approvalStop, approval: null }))).toEqual([
      'continueJob',
      'cancelJob',
    ]);
    expect(jobActions(job({ status: 'running', stop: approvalStop, approval: card('failed') }))).toEqual([
      'continueJob',
      'cancelJob',
    ]);
  });

  it('offers Continue for interrupted and paused jobs, never on its own', () => {
    // Interrupted here may be running in another process (pg-agent job): Pause stops that run.
    expect(jobActions(job({ status: 'running', stop: { kind: 'interrupted', error: null } }))).toEqual([
      'continueJob',
      'pauseJob',
      'cancelJob',
    ]);
    expect(jobActions(job({ status: 'frozen', stop: { kind: 'frozen' } }))).toEqual(['continueJob', 'cancelJob']);
  });

  it('offers nothing for finished jobs', () => {
    expect(jobActions(job({ status: 'completed', stop: { kind: 'completed', summary: 'done' } }))).toEqual([]);
    expect(
      jobActions(job({ status: 'failed', stop: { kind: 'failed', error: { code: 'INTERNAL', message: 'x' } } })),
    ).toEqual([]);
    expect(jobActions(job({ status: 'cancelled', stop: { kind: 'cancelled' } }))).toEqual([]);
  });
});

describe('mayAccept: which jobs the palette offers to pick', () => {
  it('offers review decisions for jobs pending review only', () => {
    expect(mayAccept({ status: 'pending_review', busy: false }, 'approvePlan')).toBe(true);
    expect(mayAccept({ status: 'pending_review', busy: true }, 'approvePlan')).toBe(false);
    expect(mayAccept({ status: 'running', busy: false }, 'requestChanges')).toBe(false);
  });

  it('offers Cancel for every unfinished job and nothing for finished ones', () => {
    expect(mayAccept({ status: 'planning', busy: true }, 'cancelJob')).toBe(true);
    expect(mayAccept({ status: 'completed', busy: false }, 'cancelJob')).toBe(false);
    expect(mayAccept({ status: 'frozen', busy: false }, 'continueJob')).toBe(true);
    expect(mayAccept({ status: 'pending_review', busy: false }, 'continueJob')).toBe(false);
    expect(mayAccept({ status: 'planning', busy: true }, 'pauseJob')).toBe(true);
    expect(mayAccept({ status: 'running', busy: false }, 'pauseJob')).toBe(true);
    expect(mayAccept({ status: 'pending_review', busy: false }, 'pauseJob')).toBe(false);
    expect(mayAccept({ status: 'frozen', busy: false }, 'pauseJob')).toBe(false);
  });
});

describe('jobStateText: the one status of a job, for the side panel and the status bar', () => {
  it('says what the job waits for, not the status of its file', () => {
    expect(jobStateText({ status: 'running', stop: 'approval' })).toBe('waiting for approval');
    expect(jobStateText({ status: 'pending_review', stop: 'review' })).toBe('waiting for review');
    // Not read in full (no stop known): its status.
    expect(jobStateText({ status: 'running' })).toBe('running');
    expect(jobStateText({ status: 'pending_review' })).toBe('pending review');
  });

  it('says what this window does on it first', () => {
    expect(jobStateText({ status: 'planning', busy: 'plan', stop: 'interrupted' })).toBe('planning…');
    expect(jobStateText({ status: 'pending_review', busy: 'requestChanges', stop: 'review' })).toBe('planning…');
    expect(jobStateText({ status: 'running', busy: 'write', stop: 'approval' })).toBe('running…');
    expect(jobStateText({ status: 'pending_review', busy: 'chat', stop: 'review' })).toBe('working…');
    expect(jobStateText({ status: 'pending_review', busy: true, stop: 'review' })).toBe('working…');
  });

  it('a finished or paused job says so, whatever it stopped at last', () => {
    expect(jobStateText({ status: 'completed', stop: 'approval' })).toBe('completed');
    expect(jobStateText({ status: 'cancelled', stop: 'review' })).toBe('cancelled');
    expect(jobStateText({ status: 'frozen', stop: 'frozen' })).toBe('paused');
  });
});

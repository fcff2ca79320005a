import { describe, expect, it } from 'vitest';
import type { Job } from '../../../src/core/jobs/job';
import type { JobDetail } from '../../../src/core/jobs/jobDetail';
import type { ChatEntry } from '../../../src/core/review/chatLog';
import {
  chatView,
  IDLE,
  reviewWarning,
  statusBarJob,
  todosView,
  toJobView,
  toListItem,
} from '../../../src/host/jobs/cockpit/jobView';
import type { JobStatusName } from '../../../src/shared/protocol';
import { impactReport } from '../../support/impactReports';

const job: Job = {
  id: 'job_0123456789abcdef',
  title: 'Restock the three best sellers',
  status: 'pending_review',
  phase: 'strategic',
  reviewCycles: 2,
  createdAt: '2026-11-01T10:00:00.000Z',
  updatedAt: '2026-11-01T10:05:00.000Z',
  connection: 'sample:/tmp/sample-db',
};

const impact = impactReport({
  statements: ['UPDATE'],
  estimatedRows: 3,
  exactRows: 3,
  tables: [{ schema: 'public', name: 'products', via: 'direct' as const, inserted: 0, updated: 3, deleted: 0 }],
  previewMs: 4,
});

function detail(change: Partial<JobDetail> = {}): JobDetail {
  return {
    job,
    stop: { kind: 'review', cycle: 2, maxReviewCycles: 5, overLimit: false },
    workspaceMd: '# Restock\n',
    planMd: '# Plan\n\n1. Restock\n',
    todos: {
      ok: true,
      items: [
        { id: 'find', title: 'Find the best sellers', status: 'done' },
        {
          id: 'restock',
          title: 'Restock them',
          status: 'in_progress',
          sql: 'UPDATE products SET stock_quantity = stock_quantity + 10 WHERE id IN (1, 2, 3)',
          depends_on: ['find'],
        },
        { id: 'check', title: 'Check the stock', status: 'pending', depends_on: ['restock'] },
      ],
    },
    planChange: { fromCycle: 1, toCycle: 2, diff: '--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n' },
    usage: { calls: 4, inputTokens: 4000, outputTokens: 800, costUsd: null },
    files: ['plan.md', 'todos.yaml', 'workspace.md'],
    history: [
      {
        oid: '0123456789abcdef0123456789abcdef01234567',
        message: 'review 2',
        time: new Date('2026-11-01T10:05:00.000Z'),
      },
    ],
    ...change,
  };
}

describe('toJobView', () => {
  it('carries the plan, the diff between reviews, usage and a short history to the panel', () => {
    const view = toJobView({ detail: detail(), chat: [], approval: null, sqlFiles: new Map(), local: IDLE });
    expect(view).toMatchObject({
      id: job.id,
      title: job.title,
      stop: { kind: 'review', cycle: 2, maxReviewCycles: 5, overLimit: false },
      planMd: '# Plan\n\n1. Restock\n',
      planChange: { fromCycle: 1, toCycle: 2 },
      usage: { calls: 4, inputTokens: 4000, outputTokens: 800, costUsd: null },
      history: [{ oid: '0123456', message: 'review 2', at: '2026-11-01T10:05:00.000Z' }],
      reviewWarning: null,
      busy: null,
      error: null,
    });
  });

  it('shows the held write as an approval stop without repeating its impact', () => {
    const stop = {
      kind: 'approval' as const,
      ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa',
      sql: 'UPDATE products SET stock_quantity = 5',
      sqlFile: 'sql/002-restock.sql',
      impact,
      todoId: 'restock',
    };
    const view = toJobView({ detail: detail({ stop }), chat: [], approval: null, sqlFiles: new Map(), local: IDLE });
    expect(view.stop).toEqual({
      kind: 'approval',
      ticketId: stop.ticketId,
      sqlFile: 'sql/002-restock.sql',
      todoId: 'restock',
    });
    const restock = view.todos.ok ? view.todos.items.find((t) => t.id === 'restock') : undefined;
    expect(restock?.sqlFile, 'the held write links its todo to the file in the editor').toBe('sql/002-restock.sql');
  });

  it('warns past the soft limit of review cycles', () => {
    const stop = { kind: 'review' as const, cycle: 6, maxReviewCycles: 5, overLimit: true };
    expect(reviewWarning(stop)).toMatch(/6 reviews, past the soft limit of 5/);
    expect(
      toJobView({ detail: detail({ stop }), chat: [], approval: null, sqlFiles: new Map(), local: IDLE }).reviewWarning,
    ).not.toBeNull();
  });
});

describe('todosView', () => {
  it('counts progress and links a todo to the .sql file holding its SQL', () => {
    const files = new Map([
      ['sql/001-restock.sql', 'UPDATE products SET stock_quantity = stock_quantity + 10 WHERE id IN (1, 2, 3)\n'],
    ]);
    const view = todosView(detail(), files);
    expect(view).toMatchObject({ ok: true, counts: { done: 1, skipped: 0, failed: 0, inProgress: 1, total: 3 } });
    if (!view.ok) return;
    expect(view.items.map((t) => [t.id, t.status, t.sqlFile])).toEqual([
      ['find', 'done', null],
      ['restock', 'in_progress', 'sql/001-restock.sql'],
      ['check', 'pending', null],
    ]);
    expect(view.items[2]?.dependsOn).toEqual(['restock']);
  });

  it('passes on a todos.yaml that does not parse, with its readable error', () => {
    expect(todosView(detail({ todos: { ok: false, error: 'todos.yaml line 3: bad' } }), new Map())).toEqual({
      ok: false,
      error: 'todos.yaml line 3: bad',
    });
  });
});

describe('chatView', () => {
  const at = '2026-11-01T10:06:00.000Z';
  const entries: ChatEntry[] = [
    { kind: 'user', at, text: 'Is the order right?' },
    { kind: 'draft_feedback', at, text: 'Old draft' },
    {
      kind: 'assistant',
      at,
      text: 'Yes.',
      tools: [{ name: 'read_workspace_file', args: { path: 'plan.md' }, ok: true, summary: 'read plan.md' }],
    },
    { kind: 'plan_edit', at, id: 'edit_1', summary: 'Split step 2', diff: '-a\n+b\n', status: 'discarded' },
    { kind: 'user', at, text: 'Draft feedback for me' },
    { kind: 'draft_feedback', at, text: 'Restock 20 instead of 10.' },
    { kind: 'plan_edit', at, id: 'edit_2', summary: 'Use 20', diff: '-10\n+20\n', status: 'proposed' },
    { kind: 'assistant', at, text: 'Here is a draft.', tools: [] },
  ];

  it("offers the latest turn's draft and the open plan edit, folding tool calls to their summaries", () => {
    const view = chatView(entries, null);
    expect(view.draftFeedback).toBe('Restock 20 instead of 10.');
    expect(view.openPlanEdit).toEqual({ id: 'edit_2', summary: 'Use 20', diff: '-10\n+20\n' });
    expect(view.entries[2]).toEqual({
      kind: 'assistant',
      at,
      text: 'Yes.',
      tools: [{ name: 'read_workspace_file', ok: true, summary: 'read plan.md' }],
    });
    expect(view.pending).toBeNull();
  });

  it('has no draft once the person wrote again, and shows a message in flight once', () => {
    const asked: ChatEntry[] = [...entries, { kind: 'user', at, text: 'And now?' }];
    expect(chatView(asked, null).draftFeedback).toBeNull();
    expect(chatView(asked, { text: 'And now?', reply: 'Thin' }).pending, 'already logged by the core').toEqual({
      text: '',
      reply: 'Thin',
    });
    expect(chatView(entries, { text: 'And now?', reply: '' }).pending).toEqual({ text: 'And now?', reply: '' });
  });
});

describe('statusBarJob', () => {
  it("shows the job being worked on, else the selected job waiting for the person, in its list item's words", () => {
    const a = 'job_000000000000000a';
    const b = 'job_000000000000000b';
    const job = (id: string, title: string, status: JobStatusName) => ({
      id,
      title,
      status,
      phase: 'strategic' as const,
      reviewCycles: 1,
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    const waitingA = toListItem(job(a, 'A', 'pending_review'), false, null, 'review');
    const planningB = toListItem(job(b, 'B', 'planning'), true, 'plan');
    const runningB = toListItem(job(b, 'B', 'running'), true, 'approvePlan');
    expect(statusBarJob(planningB, { item: waitingA, stop: 'review' })).toEqual({
      jobId: b,
      title: 'B',
      state: 'planning…',
    });
    expect(statusBarJob(runningB, { item: waitingA, stop: 'review' })).toEqual({
      jobId: b,
      title: 'B',
      state: 'running…',
    });
    expect(statusBarJob(undefined, { item: waitingA, stop: 'review' })).toEqual({
      jobId: a,
      title: 'A',
      state: 'waiting for review',
    });
    const held = toListItem(job(a, 'A', 'running'), false, null, 'approval');
    expect(statusBarJob(undefined, { item: held, stop: 'approval' })).toEqual({
      jobId: a,
      title: 'A',
      state: 'waiting for approval',
    });
    const done = toListItem(job(a, 'A', 'completed'), false, null, 'completed');
    expect(statusBarJob(undefined, { item: done, stop: 'completed' })).toBeUndefined();
    expect(statusBarJob(undefined, null)).toBeUndefined();
  });

  it('says of a job held at a write what its list item says: waiting for approval, not running', () => {
    const held = toListItem(
      {
        id: 'job_000000000000000a',
        title: 'Restock',
        status: 'running',
        phase: 'tactical',
        reviewCycles: 1,
        updatedAt: '2026-01-01T00:00:00.000Z',
      },
      false,
      null,
      'approval',
    );
    expect(held.state).toBe('waiting for approval');
    expect(statusBarJob(undefined, { item: held, stop: 'approval' })?.state).toBe(held.state);
  });
});

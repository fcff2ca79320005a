import { describe, expect, it } from 'vitest';
import { TIMELINE_STEPS_KEPT, timelineFromAudit } from '../../../../src/core/jobs/jobTimeline';
import { stepDescription, stepLabel, timelineBars, timelineTotals } from '../../../../src/shared/timelineChart';

const at = (minute: number) => `2025-06-12T14:${String(minute).padStart(2, '0')}:00.000Z`;
const line = (minute: number, record: object) => JSON.stringify({ at: at(minute), ...record });
const call = (minute: number, phase: string, input: number, output: number, cost: number | null, node = 'agent') =>
  line(minute, {
    type: 'model_call',
    node,
    phase,
    model: 'gemini',
    messages: [],
    response: '',
    inputTokens: input,
    outputTokens: output,
    latencyMs: 1_000,
    costUsd: cost,
  });

/** A job's audit.jsonl: planned, a chat turn, changes requested, planned again, approved, one tactical phase, done. */
const AUDIT = [
  line(0, { type: 'status', from: 'planning', to: 'planning', reason: 'created' }),
  line(1, { type: 'phase', phase: 'strategic', event: 'start', iteration: 1 }),
  call(2, 'strategic', 1_000, 100, 0.001),
  call(3, 'strategic', 2_000, 200, 0.002),
  line(4, { type: 'phase', phase: 'strategic', event: 'end', iteration: 1, summary: 'first plan' }),
  // endStrategic's record of the plan ticket it made: not a decision.
  line(4, {
    type: 'approval',
    ticketId: 'tkt_bbbbbbbbbbbbbbbbbbbb',
    approve: false,
    by: 'alice',
    comment: 'plan ticket for review cycle 1',
    recorded: false,
  }),
  line(5, { type: 'status', from: 'planning', to: 'pending_review', reason: 'plan ready' }),
  call(6, 'review', 500, 50, 0.0005, 'review_chat'),
  line(6, { type: 'tool_call', phase: 'review', name: 'read_workspace_file', args: {}, ok: true, result: '' }),
  call(7, 'review', 600, 60, 0.0006, 'review_chat'),
  line(8, { type: 'review', action: 'revise', by: 'alice', cycle: 1, feedback: 'smaller batches' }),
  line(9, { type: 'phase', phase: 'strategic', event: 'start', iteration: 2 }),
  call(10, 'strategic', 3_000, 300, null),
  line(11, { type: 'phase', phase: 'strategic', event: 'end', iteration: 2 }),
  line(12, { type: 'status', from: 'planning', to: 'pending_review', reason: 'plan ready' }),
  line(13, { type: 'review', action: 'approve', by: 'bob', cycle: 2 }),
  line(14, { type: 'phase', phase: 'tactical', event: 'start', iteration: 1 }),
  call(15, 'tactical', 4_000, 400, 0.004),
  line(16, { type: 'approval', ticketId: 'tkt_aaaaaaaaaaaaaaaaaaaa', approve: true, by: 'bob', recorded: true }),
  '{"at":"2025-06-12T14:17:00.000Z","type":"model_ca', // a torn last line: a write in progress
].join('\n');

describe('timelineFromAudit', () => {
  it('folds audit.jsonl into phase steps and review-chat steps with their calls, tokens, cost and model time', () => {
    const { steps } = timelineFromAudit(AUDIT);
    expect(steps.map((s) => [s.kind, s.phase, s.iteration, s.calls, s.inputTokens, s.outputTokens, s.modelMs])).toEqual(
      [
        ['phase', 'strategic', 1, 2, 3_000, 300, 2_000],
        ['chat', 'review', 1, 2, 1_100, 110, 2_000],
        ['phase', 'strategic', 2, 1, 3_000, 300, 1_000],
        ['phase', 'tactical', 1, 1, 4_000, 400, 1_000],
      ],
    );
    expect(steps[0]?.costUsd).toBeCloseTo(0.003);
    expect(steps[0]).toMatchObject({ startedAt: at(1), endedAt: at(4), summary: 'first plan' });
    // A call without a known price makes its step's cost unknown, not zero.
    expect(steps[2]?.costUsd).toBeNull();
    // The tactical phase has no end yet: it is running (or was interrupted).
    expect(steps[3]?.endedAt).toBeNull();
  });

  it('places review decisions, status changes and write decisions between the steps', () => {
    const { marks } = timelineFromAudit(AUDIT);
    expect(marks.map((m) => [m.after, m.text])).toEqual([
      [0, 'plan ready for review (cycle 1)'],
      [1, 'Review 1: changes requested by alice'],
      [2, 'plan ready for review (cycle 2)'],
      [2, 'Review 2: plan approved by bob'],
      [3, 'write approved by bob'],
    ]);
  });

  it('counts calls made outside a recorded phase start in a phase of their own', () => {
    const { steps } = timelineFromAudit([call(1, 'tactical', 10, 1, 0), call(2, 'tactical', 10, 1, 0)].join('\n'));
    expect(steps.map((s) => [s.phase, s.iteration, s.calls])).toEqual([['tactical', 1, 2]]);
  });

  it('is empty for a job without audit records, and ignores lines that are not JSON objects', () => {
    expect(timelineFromAudit('')).toEqual({ steps: [], marks: [] });
    expect(timelineFromAudit('null\n42\n"x"\n')).toEqual({ steps: [], marks: [] });
  });

  it(`keeps the newest ${TIMELINE_STEPS_KEPT} steps of a long job, with their marks`, () => {
    const lines: string[] = [];
    for (let i = 1; i <= TIMELINE_STEPS_KEPT + 5; i++) {
      lines.push(
        line(0, { type: 'phase', phase: 'tactical', event: 'start', iteration: i }),
        call(0, 'tactical', i, 0, 0),
        line(0, { type: 'phase', phase: 'tactical', event: 'end', iteration: i }),
      );
      if (i === 3 || i === TIMELINE_STEPS_KEPT + 5)
        lines.push(line(0, { type: 'status', from: 'running', to: 'frozen', reason: 'paused' }));
    }
    const { steps, marks } = timelineFromAudit(lines.join('\n'));
    expect(steps).toHaveLength(TIMELINE_STEPS_KEPT);
    expect(steps[0]?.iteration).toBe(6);
    expect(marks).toEqual([{ at: at(0), text: 'paused', after: TIMELINE_STEPS_KEPT - 1 }]);
  });
});

describe('timeline chart', () => {
  it('draws a bar per step, tallest for the most tokens, with its label, sentence and the marks after it', () => {
    const bars = timelineBars(timelineFromAudit(AUDIT));
    expect(bars.map((b) => b.label)).toEqual(['S1', 'R1', 'S2', 'T1']);
    expect(bars.map((b) => b.height)).toEqual([3_300 / 4_400, 1_210 / 4_400, 3_300 / 4_400, 1]);
    expect(bars[3]?.running).toBe(true);
    expect(bars[1]?.marksAfter).toEqual(['Review 1: changes requested by alice']);
    expect(bars[0]?.description).toBe(
      'Strategic phase 1: 2 model calls, 3,000 in / 300 out tokens, ~$0.0030, 2.0 s model time — first plan',
    );
    expect(bars[2]?.description).toContain('cost unknown');
  });

  it('labels the review chat by the review it belongs to', () => {
    expect(stepLabel({ phase: 'review', iteration: 0 })).toBe('R');
    expect(
      stepDescription({
        kind: 'chat',
        phase: 'review',
        iteration: 2,
        startedAt: at(0),
        endedAt: at(1),
        calls: 1,
        inputTokens: 5,
        outputTokens: 1,
        costUsd: 0,
        modelMs: 250,
        summary: null,
      }),
    ).toBe('Review chat (review 2): 1 model call, 5 in / 1 out tokens, ~$0.0000, 250 ms model time');
  });

  it('keeps a sliver for a step without tokens, and sums the steps', () => {
    const timeline = timelineFromAudit(
      [
        line(0, { type: 'phase', phase: 'strategic', event: 'start', iteration: 1 }),
        call(1, 'tactical', 100, 0, 0.01),
      ].join('\n'),
    );
    expect(timelineBars(timeline).map((b) => b.height)).toEqual([0.03, 1]);
    expect(timelineTotals(timeline)).toBe('2 steps · 1 model call · 100 tokens · ~$0.0100');
  });
});

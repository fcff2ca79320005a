// The pure parts of collaborative planning: the convergence formula and its thresholds, the --models list,
// the analysts built from it, and the validation of plan.json.
import { beforeAll, describe, expect, it } from 'vitest';
import { buildAnalysts, parseModelList } from '../../../../src/core/collab/collabModels';
import { computeConvergence, recommend, stabilityOf } from '../../../../src/core/collab/convergence';
import { planOutputSchema } from '../../../../src/core/collab/planSchema';
import type { SessionState } from '../../../../src/core/collab/sessionTypes';
import { askedOf } from '../../../../src/core/collab/sessionView';
import type { LlmProvider } from '../../../../src/core/llm/provider';
import { loadParser } from '../../../../src/core/sql/parse';
import { PLAN } from '../../../support/collabScript';

describe('convergence', () => {
  it('is 0.5·agreement + 0.3·feasibility + 0.2·stability', () => {
    const c = computeConvergence({
      agreements: 3,
      disagreements: 1,
      feasibility: 0.5,
      insights: ['x', 'y'],
      knownInsights: ['X'],
      roundsLeft: 2,
    });
    expect(c.components).toEqual({ agreement: 0.75, feasibility: 0.5, stability: 0.5 });
    expect(c.score).toBe(0.625);
    expect(c.newInsights).toEqual(['y']);
    expect(c.recommendation).toBe('continue');
  });

  it('converges at 0.8, asks the person above 3 open disagreements, else continues while rounds are left', () => {
    expect(recommend(0.8, 5, 2)).toBe('converged');
    expect(recommend(0.79, 4, 2)).toBe('user_input_needed');
    expect(recommend(0.79, 3, 1)).toBe('continue');
    expect(recommend(0.79, 3, 0)).toBe('max_rounds');
  });

  it('counts no review points as no agreement, and no insights as stable', () => {
    const c = computeConvergence({
      agreements: 0,
      disagreements: 0,
      feasibility: 1,
      insights: [],
      knownInsights: [],
      roundsLeft: 0,
    });
    expect(c.components).toEqual({ agreement: 0, feasibility: 1, stability: 1 });
    expect(stabilityOf(['Same point!', 'same point'], []).stability).toBe(0);
  });
});

describe('--models', () => {
  it('parses provider:model pairs in order', () => {
    expect(parseModelList('gemini:gemini-2.5-pro, openai:qwen2.5-coder:7b')).toEqual([
      { provider: 'gemini', model: 'gemini-2.5-pro' },
      { provider: 'openai', model: 'qwen2.5-coder:7b' },
    ]);
  });

  it.each([
    ['', 'the list is empty'],
    ['claude:opus', 'does not start with gemini: or openai:'],
    ['gemini:', 'has no model name'],
    ['gemini:a,gemini:a', 'is listed twice'],
  ])('refuses %j (%s)', (text, why) => {
    expect(() => parseModelList(text)).toThrow(why);
  });

  it('gives each analyst the other models as fallbacks; one model makes two perspectives of it', () => {
    const p = (model: string) => ({ name: 'gemini', model }) as LlmProvider;
    const [a, b] = buildAnalysts([p('one'), p('two')]);
    expect([a.chain.map((x) => x.model), b.chain.map((x) => x.model), a.sameModel]).toEqual([
      ['one', 'two'],
      ['two', 'one'],
      false,
    ]);
    const [sa, sb] = buildAnalysts([p('only')]);
    expect([sa.perspective, sb.perspective, sa.sameModel, sb.chain.map((x) => x.model)]).toEqual([
      'data/architecture',
      'implementation/SQL',
      true,
      ['only'],
    ]);
  });
});

describe('plan.json validation', () => {
  beforeAll(() => loadParser());

  it('accepts a plan with known dependencies and parsable SQL', () => {
    expect(planOutputSchema.safeParse(PLAN).success).toBe(true);
  });

  it.each([
    [
      'an unknown dependency',
      { tasks: [PLAN.tasks[0], { ...PLAN.tasks[1], depends_on: ['t9'] }] },
      'depends on unknown task "t9"',
    ],
    ['a cycle', { tasks: [{ ...PLAN.tasks[0], depends_on: ['t2'] }, PLAN.tasks[1]] }, 'dependency cycle'],
    [
      'a duplicate id',
      { tasks: [PLAN.tasks[0], { ...PLAN.tasks[1], id: 't1', depends_on: [] }] },
      'duplicate task id "t1"',
    ],
    [
      'SQL that does not parse',
      { tasks: [PLAN.tasks[0], { ...PLAN.tasks[1], sql: 'DELET FROM orders' }] },
      'does not parse',
    ],
    ['one task only', { tasks: [PLAN.tasks[0]] }, 'expected array to have >=2 items'],
  ])('refuses %s', (_what, patch, message) => {
    const result = planOutputSchema.safeParse({ ...PLAN, ...patch });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message).join(' | ')).toContain(message);
  });
});

describe('what a session asks', () => {
  const base: SessionState = {
    id: 'collab_0123456789abcdef',
    task: 't',
    direction: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    connection: 'test',
    maxRounds: 2,
    models: ['gemini:x'],
    phase: 'awaiting-decision',
    currentRound: 2,
    roundsThisLeg: 2,
    rounds: [2, 1].map((n) => ({
      number: 3 - n,
      models: ['gemini:x'],
      solutions: 2,
      score: 0.6,
      recommendation: n === 1 ? ('max_rounds' as const) : ('continue' as const),
      openDisagreements: 2,
      degraded: false,
      superseded: false,
    })),
    decisions: [],
    awaiting: { kind: 'choice', round: 2, questions: ['Keep them?'], options: 2 },
    selectedOption: null,
    jobId: null,
    lastError: null,
    usage: { total: { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 }, byModel: [] },
  };

  it('flags options shown because the round limit was reached as uncertain, with the questions', () => {
    expect(askedOf(base)).toBe(
      'a choice among 2 option(s) of round 2 — not converged after 2 round(s): the options are uncertain (or a clarification, a new direction, more analysis). Questions: (1) Keep them?',
    );
  });

  it('asks nothing of an executed session, and for more analysis after an interrupted round', () => {
    expect(askedOf({ ...base, phase: 'executed', awaiting: null, jobId: 'job_0123456789abcdef' })).toBeNull();
    expect(
      askedOf({
        ...base,
        phase: 'analysis',
        awaiting: null,
        lastError: { code: 'INTERNAL', message: 'boom', at: base.createdAt },
      }),
    ).toBe('the interrupted round to go on (more analysis): boom');
  });
});

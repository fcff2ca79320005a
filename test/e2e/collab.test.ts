// Collaborative planning in a real VS Code (code-server + Chromium) against the scripted Gemini server, on
// the sample database: Plan with Several Models… → round 1 asks a question (the analysts disagree) → the
// answer typed into its field → round 2 converges (two rounds on the chart) → option 1 chosen →
// IMPL_PLAN.md rendered → Execute as job → the job waits at its plan review in the side panel.
// One configured model: the two analysts are two perspectives of it. Screenshots: test-artifacts/e2e/collab/.
import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { analysis, isAnalysis, isPlan, isReviewOf, isSynthesis, review, synthesis } from '../support/collabScript';
import type { Rule } from '../support/scriptedModelServer';
import { workbenchSuite } from './harness/suite';
import { findWebviewFrame, pickCommand, screenshot } from './harness/workbench';

const SUITE = 'collab';
const COMMAND = 'Postgres Agent: Plan with Several Models…';
const TASK = 'Restock products 1, 2 and 3 for the week';
const QUESTION = 'How many units should each product get?';
const ANSWER = 'Ten units each.';
const READ_SQL = 'SELECT id, stock_quantity FROM products WHERE id IN (1, 2, 3)';
const WRITE_SQL = 'UPDATE products SET stock_quantity = stock_quantity + 10 WHERE id IN (1, 2, 3)';
const SQL = [
  { sql: READ_SQL, purpose: 'current stock', kind: 'read' as const, objects: ['products'] },
  { sql: WRITE_SQL, purpose: 'restock', kind: 'write' as const, objects: ['products'], expectedRows: 3 },
];
const PLAN = {
  title: 'Restock products 1, 2 and 3',
  overview: 'Read the stock, then add ten units to each product.',
  rationale: 'Both perspectives agreed once the person said ten units each.',
  complexity: 'low',
  tasks: [
    {
      id: 'read-stock',
      title: 'Read the current stock',
      description: 'Know where we start.',
      scope: 'read',
      objects: ['products'],
      sql: READ_SQL,
      depends_on: [],
      execution_group: 1,
      verification: 'three rows are shown',
    },
    {
      id: 'restock',
      title: 'Add 10 units to products 1, 2 and 3',
      description: 'One UPDATE of three rows.',
      scope: 'write',
      objects: ['products'],
      sql: WRITE_SQL,
      depends_on: ['read-stock'],
      execution_group: 2,
      verification: `${READ_SQL} shows 10 more of each`,
    },
  ],
  acceptanceCriteria: ['Products 1, 2 and 3 have 10 more units each'],
  risks: [{ risk: 'the wrong products', mitigation: 'the impact preview shows the 3 rows before approval' }],
  prerequisites: ['none'],
};

const SAMPLE_DB_TIMEOUT_MS = 150_000;
const STEP_TIMEOUT_MS = 90_000;
const UI_TIMEOUT_MS = 30_000;
const SESSION_VIEW = '[data-testid="session-task"]';

const suite = workbenchSuite(SUITE, { withModel: true });

/** One round on the one model: both perspectives, both reviews, the synthesis. */
function round(reviews: { byA: object; byB: object }, questions: string[]): Rule[] {
  return [
    { match: isAnalysis('data/architecture'), reply: { json: analysis('Restock in one UPDATE', SQL, [QUESTION]) } },
    { match: isAnalysis('implementation/SQL'), reply: { json: analysis('Read, then restock', SQL) } },
    { match: isReviewOf('B'), reply: { json: reviews.byA } },
    { match: isReviewOf('A'), reply: { json: reviews.byB } },
    { match: isSynthesis, reply: { json: synthesis(questions) } },
  ];
}

function view(p: Page): Promise<Frame> {
  return findWebviewFrame(p, SESSION_VIEW, UI_TIMEOUT_MS);
}

async function text(p: Page, selector: string): Promise<string> {
  const frame = await view(p);
  const target = frame.locator(selector).first();
  if ((await target.count()) === 0) return '';
  return (await target.innerText()).replace(/\s+/g, ' ').trim();
}

async function click(p: Page, testId: string): Promise<void> {
  const frame = await view(p);
  const target = frame.locator(`[data-testid="${testId}"]`).first();
  await target.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  await target.click();
}

/** Waits until the session view says the session is in `phase` and no step runs. */
async function waitForPhase(p: Page, phase: string, timeout: number): Promise<void> {
  await expect
    .poll(
      async () => {
        try {
          if ((await text(p, '[data-testid="busy"]')) !== '') return 'busy';
          const meta = await text(p, '[data-testid="session-meta"]');
          const error = await text(p, '[data-testid="error"]');
          return error !== '' ? `error: ${error}` : (/ · ([a-z-]+) · models:/.exec(meta)?.[1] ?? `(${meta})`);
        } catch {
          return '(no session view yet)';
        }
      },
      { timeout, interval: 300, message: `session reaching ${phase}` },
    )
    .toBe(phase);
}

describe('Collaborative planning in VS Code', () => {
  it(
    'two rounds, a question answered, an option chosen, IMPL_PLAN.md rendered, executed as a job at review',
    { timeout: 600_000 },
    async () => {
      const p = suite.page();
      const model = suite.model();
      model.script(round({ byA: review(0, 3), byB: review(0, 2) }, [QUESTION]));

      // 1. The palette command → the task → round 1 in the session view, which asks the question.
      const widget = p.locator('.quick-input-widget');
      await pickCommand(p, COMMAND);
      await widget
        .locator('.quick-input-title', { hasText: 'Postgres Agent: Plan with Several Models' })
        .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await p.keyboard.type(TASK);
      await p.keyboard.press('Enter');
      await suite.explained(() => waitForPhase(p, 'awaiting-decision', SAMPLE_DB_TIMEOUT_MS));
      expect(await text(p, '[data-testid="asked"]')).toContain('clarification');
      expect(await text(p, '[data-testid="session-meta"]')).toContain('(two perspectives of the same model)');
      expect(await text(p, '[data-testid="analysis-A"]')).toContain('same model, data/architecture perspective');
      expect(await text(p, '[data-testid="cross-verification"]')).toContain('Disagreements (5)');
      await screenshot(p, 'round-1-asks-a-question');

      // 2. The answer in the question's field → round 2 converges: two rounds on the chart.
      model.script(round({ byA: review(3, 0), byB: review(2, 0) }, []));
      const frame = await view(p);
      const answer = frame.locator('[data-testid="answer-1"]');
      await answer.fill(ANSWER);
      await answer.scrollIntoViewIfNeeded();
      await screenshot(p, 'question-answered');
      await click(p, 'send-clarification');
      await waitForPhase(p, 'awaiting-decision', STEP_TIMEOUT_MS);
      await expect
        .poll(() => text(p, '[data-testid="convergence-chart"]'), { timeout: UI_TIMEOUT_MS })
        .toMatch(/0\.50.*R1.*1\.00.*R2/);
      expect(await text(p, '[data-testid="asked"]')).toContain('a choice among 2 option(s) of round 2');
      expect(model.requests.filter(isAnalysis('data/architecture')).at(-1)?.text).toContain(ANSWER);
      expect(await text(p, '[data-testid="option-1"]')).toMatch(/Feasibility \(SQL verified\) 100 %/);
      await (await view(p)).locator('[data-testid="convergence-chart"]').scrollIntoViewIfNeeded();
      await screenshot(p, 'round-2-converged-options');

      // 3. Option 1 → IMPL_PLAN.md rendered (markdown, not text).
      model.script([{ match: isPlan, reply: { json: PLAN } }]);
      await click(p, 'choose-option-1');
      await waitForPhase(p, 'planned', STEP_TIMEOUT_MS);
      const planFrame = await view(p);
      await expect
        .poll(() => planFrame.locator('[data-testid="impl-plan-markdown"] h1').allInnerTexts(), {
          timeout: UI_TIMEOUT_MS,
        })
        .toEqual(['Implementation Plan: Restock products 1, 2 and 3']);
      expect(await planFrame.locator('[data-testid="impl-plan-markdown"] pre code').first().innerText()).toContain(
        READ_SQL,
      );
      await screenshot(p, 'impl-plan-rendered');

      // 4. Execute as job → the job at its plan review in the side panel, with the plan's todos.
      await click(p, 'execute-as-job');
      await waitForPhase(p, 'executed', STEP_TIMEOUT_MS);
      const jobPanel = await findWebviewFrame(p, '[data-testid="job-state"]', UI_TIMEOUT_MS);
      await expect
        .poll(() => jobPanel.locator('[data-testid="job-state"]').getAttribute('data-stop'), { timeout: UI_TIMEOUT_MS })
        .toBe('review');
      expect((await jobPanel.locator('[data-testid="job-title"]').innerText()).trim()).toBe(
        'Restock products 1, 2 and 3',
      );
      await screenshot(p, 'executed-as-job-at-review');
    },
  );
});

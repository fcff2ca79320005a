// Jobs in a real VS Code (code-server + Chromium) against the scripted Gemini server, clicked the way a
// person clicks: New Job… → the plan and todos in the job's cockpit → feedback and Request changes → the revised
// plan with its diff → a review chat reply streamed in (tools folded, Use as feedback, a plan edit
// applied) → Approve plan → the job's write held with its CodeLens in the editor → Approve & run → the
// job completes. A job waiting for review stays reviewable across a window reload; a job paused while
// planning goes on with Continue; the job view stays readable in light, dark and high-contrast themes.
// Screenshots of each step: test-artifacts/e2e/jobs/ (logs under logs/).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, Rule } from '../support/scriptedModelServer';
import { reviewChat, strategic, tactical } from '../support/jobScript';
import { workbenchSuite } from './harness/suite';
import type { CockpitJobState } from './harness/cockpit';
import { cockpit, cockpitState, frameTexts, navigator, newJob, waitForCockpitStop } from './harness/cockpit';
import { readableInEveryTheme } from './harness/themes';
import {
  ACTIVITY_ITEM,
  CODELENS_LINK,
  RISK_LENS,
  runCommand,
  screenshot,
  seenNotifications,
} from './harness/workbench';
import { lensTexts } from './harness/approvalCards';
import { CHAT_QUESTION, FEEDBACK, TASK, TODOS_V1, TODOS_V2, WRITE_SQL } from './harness/restockJob';

const SUITE = 'jobs';

// The first job also generates the sample database.
const SAMPLE_DB_TIMEOUT_MS = 150_000;
const STEP_TIMEOUT_MS = 90_000;
const UI_TIMEOUT_MS = 30_000;

// ---- the job the model plans (harness/restockJob.ts): what this suite scripts around it ----
const WORKSPACE_MD = `# Restock products 1, 2 and 3\n\n## Findings\n\n- products.stock_quantity holds the stock; products 1–3 exist.\n`;
// Markup a model could write: it must be rendered harmless (no script, no image, no javascript: link).
const PLAN_V1 = [
  '# Plan',
  '',
  '1. Read the current stock of products 1, 2 and 3.',
  '2. Add **5** units to each of them.',
  '',
  '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">',
  '[details](javascript:window.__pwned=3)',
  '',
].join('\n');
const PLAN_V2 = [
  '# Plan',
  '',
  '1. Read the current stock of products 1, 2 and 3.',
  '2. Add **10** units to each of them, as the reviewer asked.',
  '3. Check the new stock.',
  '',
].join('\n');
const CHAT_REPLY =
  'Because the task names exactly those three products; the plan reads their stock first, then adds 10 units to each in one UPDATE of 3 rows.';
const DRAFT = 'Keep the restock to products 1, 2 and 3 and report their new stock.';
const EDIT_QUESTION = 'Add a last step that reports the new stock.';
const PLAN_V3 = `${PLAN_V2}4. Report the new stock in the job summary.\n`;

// ---- the second job, left waiting for review across a window reload ----
const TASK_2 = 'Find customers without any order';
const PLAN_2 = '# Plan\n\n1. List customers that have no orders.\n';

// ---- the third job, paused while the model is still thinking ----
const TASK_3 = 'Count the orders of each status';
const PLAN_3 = '# Plan\n\n1. Count orders grouped by status.\n';
/** Long enough to click Pause while the model "thinks"; the test waits for states, not for this time. */
const THINKING_MS = 5_000;

const suite = workbenchSuite(SUITE, { withModel: true });
const workbench = () => suite.page();
const model = () => suite.model();

/** Phase requests name their job ("Job: <title> (<id>)…"): rules of one job never answer another's. */
const of = (title: string, phase: (req: RecordedRequest) => boolean) => (req: RecordedRequest) =>
  phase(req) && req.text.includes(`Job: ${title} (`);

function strategicTurn(title: string, calls: { name: string; args: object }[]): Rule {
  return { match: of(title, strategic), reply: { functionCalls: calls } };
}

/** A job's state as its cockpit shows it. */
function jobState(p: Page, title: string): Promise<CockpitJobState | undefined> {
  return cockpitState(p, title);
}

/** Waits until the job's cockpit shows it stopped at `stop` (this window no longer busy with it). */
function waitForStop(
  p: Page,
  title: string,
  stop: string,
  timeout = STEP_TIMEOUT_MS,
  text?: RegExp,
): Promise<CockpitJobState> {
  return waitForCockpitStop(p, title, stop, timeout, text);
}

/** The folder of the workspace's job titled `title`. */
function jobFolder(workspace: string, title: string): string {
  const jobs = join(workspace, '.pgagent', 'jobs');
  const id = readdirSync(jobs).find((name) => {
    try {
      return (JSON.parse(readFileSync(join(jobs, name, 'job.json'), 'utf8')) as { title: string }).title === title;
    } catch {
      return false;
    }
  });
  if (id === undefined) throw new Error(`No job "${title}" in ${jobs}`);
  return join(jobs, id);
}

/** The job's checkpoints: how many stops are kept, and how many others besides the newest. */
function checkpointsBeyondRetention(workspace: string, title: string): { stops: number; extra: number } {
  const dir = join(workspace, '.pgagent', 'checkpoints', basename(jobFolder(workspace, title)));
  const kept = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.writes.json'))
    .sort();
  const writesOf = (f: string) => join(dir, f.replace(/\.json$/, '.writes.json'));
  const stops = kept.filter(
    (f) => existsSync(writesOf(f)) && readFileSync(writesOf(f), 'utf8').includes('"__interrupt__"'),
  );
  const newest = kept[kept.length - 1];
  return { stops: stops.length, extra: kept.filter((f) => f !== newest && !stops.includes(f)).length };
}

function auditedToolCalls(jobDir: string): string[] {
  return readFileSync(join(jobDir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; name?: string })
    .filter((r) => r.type === 'tool_call')
    .map((r) => r.name ?? '');
}

/** Clicks `testId` in the cockpit of the job titled `title`. */
async function click(p: Page, title: string, testId: string): Promise<void> {
  const frame = await cockpit(p, title, UI_TIMEOUT_MS);
  const target = frame.locator(`[data-testid="${testId}"]`).first();
  await target.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  await target.click();
}

/** Texts of `selector` in the job's cockpit. */
async function texts(p: Page, title: string, selector: string): Promise<string[]> {
  return frameTexts(await cockpit(p, title, UI_TIMEOUT_MS), selector);
}

/** Texts of `selector` in the side panel (the navigator). */
async function navTexts(p: Page, selector: string): Promise<string[]> {
  return frameTexts(await navigator(p, UI_TIMEOUT_MS), selector);
}

/** Text of the job's views that must stay readable in every theme (WCAG AA): the navigator's list, the cockpit. */
const NAVIGATOR_READABLE = ['.job-item .job-title', '.job-item .badge', '.job-item .cycles'];
const COCKPIT_READABLE = [
  '[data-testid="job-title"]',
  '[data-testid="job-state"]',
  '.usage',
  '[data-testid="plan-diff"] .diff-line',
];

describe('Jobs in VS Code', () => {
  it('plans, revises on feedback, discusses, runs the approved write and completes', { timeout: 600_000 }, async () => {
    const p = workbench();
    const before = (await seenNotifications(p)).length;
    model().script([
      strategicTurn(TASK, [
        { name: 'write_workspace', args: { content: WORKSPACE_MD } },
        { name: 'write_plan', args: { content: PLAN_V1 } },
        { name: 'write_todos', args: { todos: TODOS_V1 } },
      ]),
      strategicTurn(TASK, [{ name: 'plan_ready', args: { summary: 'Restock products 1–3 by 5 units.' } }]),
    ]);

    // 1. New Job (palette) → the plan and the todos in the job's cockpit, waiting for review; the job in the side panel.
    await runCommand(p, 'Postgres Agent: Show Review Panel');
    await newJob(p, TASK);
    const first = await waitForStop(p, TASK, 'review', SAMPLE_DB_TIMEOUT_MS, /cycle 1/);
    expect(first.status).toBe('pending_review');
    const frame = await cockpit(p, TASK);
    await expect
      .poll(() => texts(p, TASK, '[data-testid="plan-md"] li'), { timeout: UI_TIMEOUT_MS })
      .toEqual(['Read the current stock of products 1, 2 and 3.', 'Add 5 units to each of them.']);
    const injected = await frame.evaluate(() => ({
      scripts: document.querySelectorAll('[data-testid="plan-md"] script, [data-testid="plan-md"] img').length,
      jsLinks: [...document.querySelectorAll('[data-testid="plan-md"] a')].filter((a) =>
        (a.getAttribute('href') ?? '').startsWith('javascript'),
      ).length,
      pwned: Reflect.get(window, '__pwned') as unknown,
    }));
    expect(injected, 'markup in the plan rendered harmless').toEqual({ scripts: 0, jsLinks: 0, pwned: undefined });
    expect(await navTexts(p, '[data-testid="job-item"]')).toEqual([expect.stringContaining(TASK)]);
    // One status for one job: the side panel's badge and the status bar say the same words.
    await expect
      .poll(() => navTexts(p, '[data-testid="job-status-badge"]'), { timeout: UI_TIMEOUT_MS })
      .toEqual(['waiting for review']);
    await expect
      .poll(() => p.locator('.part.statusbar').innerText(), { timeout: UI_TIMEOUT_MS })
      .toContain('— waiting for review');
    await screenshot(p, 'plan-for-review', SUITE);
    await expect
      .poll(() => texts(p, TASK, '[data-testid="todo-item"]'), { timeout: UI_TIMEOUT_MS })
      .toEqual([
        expect.stringContaining('Read the current stock'),
        expect.stringContaining('Add 5 units to products 1, 2 and 3'),
      ]);
    expect(
      await (
        await cockpit(p, TASK)
      )
        .locator('[data-testid="todo-item"]')
        .evaluateAll((items) => items.map((i) => i.getAttribute('data-status'))),
    ).toEqual(['pending', 'pending']);
    await screenshot(p, 'todos-for-review', SUITE);

    // 2. Feedback → Request changes → another planning round → review 2 with the plan's diff.
    model().script([
      strategicTurn(TASK, [
        { name: 'write_plan', args: { content: PLAN_V2 } },
        { name: 'write_todos', args: { todos: TODOS_V2 } },
      ]),
      strategicTurn(TASK, [{ name: 'plan_ready', args: { summary: 'Restock by 10 units, then check.' } }]),
    ]);
    const requestButton = (await cockpit(p, TASK)).locator('[data-testid="request-changes-button"]');
    expect(await requestButton.getAttribute('disabled'), 'Request changes needs feedback first').not.toBeNull();
    await (await cockpit(p, TASK)).locator('[data-testid="feedback-input"]').fill(FEEDBACK);
    await click(p, TASK, 'request-changes-button');
    const second = await waitForStop(p, TASK, 'review', STEP_TIMEOUT_MS, /cycle 2/);
    expect(second.status).toBe('pending_review');
    await expect
      .poll(async () => (await cockpit(p, TASK)).locator('[data-testid="feedback-input"]').inputValue(), {
        timeout: UI_TIMEOUT_MS,
        message: 'the sent feedback leaves the box',
      })
      .toBe('');
    const revision = model().requests.filter(strategic).at(2);
    expect(revision?.text, 'the feedback reaches the agent').toContain(FEEDBACK);
    await click(p, TASK, 'plan-diff-toggle');
    await expect
      .poll(() => texts(p, TASK, '[data-testid="plan-diff"] .diff-add'), { timeout: UI_TIMEOUT_MS })
      .toEqual(
        expect.arrayContaining([
          expect.stringContaining('Add **10** units to each of them, as the reviewer asked.'),
          expect.stringContaining('Check the new stock.'),
        ]),
      );
    expect(await texts(p, TASK, '[data-testid="plan-diff"] .diff-del')).toEqual(
      expect.arrayContaining([expect.stringContaining('Add **5** units to each of them.')]),
    );
    expect(await navTexts(p, '[data-testid="job-item"]')).toEqual([expect.stringMatching(/2 cycles/)]);
    await screenshot(p, 'plan-changed-since-last-review', SUITE);
    await click(p, TASK, 'plan-diff-toggle');

    // 3. A review chat message: tools folded, a drafted feedback, the reply streamed in; then a plan edit applied.
    model().script([
      {
        match: reviewChat,
        reply: {
          functionCalls: [
            { name: 'read_workspace_file', args: { path: 'plan.md' } },
            { name: 'draft_feedback', args: { text: DRAFT } },
          ],
        },
      },
      // Pieces 150 ms apart: the panel shows the reply growing.
      { match: reviewChat, reply: { text: CHAT_REPLY, chunkDelayMs: 150 } },
    ]);
    await (await cockpit(p, TASK)).locator('[data-testid="chat-input"]').fill(CHAT_QUESTION);
    await click(p, TASK, 'chat-send');
    await expect
      .poll(
        async () => {
          const partial = (await texts(p, TASK, '[data-testid="chat-streaming"] .markdown'))[0] ?? '';
          return partial !== '' && partial !== CHAT_REPLY && CHAT_REPLY.startsWith(partial.replace(/…$/, ''));
        },
        { timeout: STEP_TIMEOUT_MS, interval: 100, message: 'part of the reply shown while it streams' },
      )
      .toBe(true);
    await screenshot(p, 'review-chat-streaming', SUITE);
    await expect
      .poll(() => texts(p, TASK, '[data-testid="chat-reply"] .markdown'), {
        timeout: STEP_TIMEOUT_MS,
        message: 'the chat reply',
      })
      .toEqual([CHAT_REPLY]);
    expect(await texts(p, TASK, '[data-testid="chat-user"]')).toEqual([expect.stringContaining(CHAT_QUESTION)]);
    expect(await texts(p, TASK, '[data-testid="chat-tools"] summary')).toEqual([
      '2 tool calls: read_workspace_file, draft_feedback',
    ]);
    const chatRequests = model().requests.filter(reviewChat);
    expect(
      chatRequests.map((r) => r.stream),
      'the chat replies were requested as streams',
    ).toEqual([true, true]);
    expect(chatRequests[0]?.text).toContain(CHAT_QUESTION);
    await screenshot(p, 'review-chat-reply', SUITE);
    await click(p, TASK, 'use-as-feedback-button');
    await expect
      .poll(async () => (await cockpit(p, TASK)).locator('[data-testid="feedback-input"]').inputValue(), {
        timeout: UI_TIMEOUT_MS,
        message: 'the draft in the feedback box',
      })
      .toBe(DRAFT);
    await (await cockpit(p, TASK)).locator('[data-testid="feedback-input"]').fill('');

    model().script([
      {
        match: reviewChat,
        reply: {
          functionCall: {
            name: 'propose_plan_edit',
            args: { new_plan: PLAN_V3, summary: 'Add a step that reports the new stock' },
          },
        },
      },
      { match: reviewChat, reply: { text: 'I proposed the edit; apply it if it looks right.' } },
    ]);
    await (await cockpit(p, TASK)).locator('[data-testid="chat-input"]').fill(EDIT_QUESTION);
    await click(p, TASK, 'chat-send');
    const edit = (await cockpit(p, TASK)).locator('[data-testid="chat-plan-edit"]');
    await expect
      .poll(() => edit.getAttribute('data-status'), { timeout: STEP_TIMEOUT_MS, message: 'the proposed plan edit' })
      .toBe('proposed');
    expect(await texts(p, TASK, '[data-testid="chat-plan-edit"] .diff-add')).toEqual([
      expect.stringContaining('4. Report the new stock in the job summary.'),
    ]);
    await screenshot(p, 'review-chat-plan-edit', SUITE);
    await click(p, TASK, 'apply-plan-edit-button');
    await expect
      .poll(() => edit.getAttribute('data-status'), { timeout: STEP_TIMEOUT_MS, message: 'the plan edit applied' })
      .toBe('applied');
    await expect
      .poll(() => texts(p, TASK, '[data-testid="plan-md"] li'), { timeout: UI_TIMEOUT_MS })
      .toEqual([
        'Read the current stock of products 1, 2 and 3.',
        'Add 10 units to each of them, as the reviewer asked.',
        'Check the new stock.',
        'Report the new stock in the job summary.',
      ]);

    // 4. Approve plan → tactical phase → the write held with its CodeLens in the editor.
    model().script([
      {
        match: of(TASK, tactical),
        reply: { functionCall: { name: 'run_sql', args: { sql: WRITE_SQL, todo_id: 'restock' } } },
      },
      {
        match: of(TASK, tactical),
        reply: {
          functionCalls: [
            { name: 'update_todo', args: { id: 'read-stock', status: 'done' } },
            { name: 'update_todo', args: { id: 'restock', status: 'done', note: '3 products restocked' } },
            { name: 'finish_phase', args: { summary: 'Products 1–3 restocked by 10 units.' } },
          ],
        },
      },
      strategicTurn(TASK, [
        { name: 'job_complete', args: { summary: 'Products 1, 2 and 3 each have 10 more units in stock.' } },
      ]),
    ]);
    await click(p, TASK, 'approve-plan-button');
    await waitForStop(p, TASK, 'approval');
    await expect
      .poll(() => lensTexts(p), {
        timeout: UI_TIMEOUT_MS,
        interval: 250,
        message: "the CodeLens above the job's write",
      })
      .toEqual(expect.arrayContaining([expect.stringMatching(RISK_LENS), 'Approve & run', 'Reject']));
    expect((await lensTexts(p)).find((t) => RISK_LENS.test(t))).toMatch(/^LOW · 3 rows in 1 table$/);
    await expect
      .poll(
        async () =>
          (await p.locator('.part.editor .monaco-editor .view-lines').first().innerText()).replace(/\s+/g, ' '),
        { timeout: UI_TIMEOUT_MS, message: 'the write in its editor' },
      )
      .toContain(WRITE_SQL);
    const card = (await cockpit(p, TASK)).locator('[data-testid="cockpit-impact"] [data-testid="approval-card"]');
    await expect
      .poll(() => card.getAttribute('data-status'), { timeout: UI_TIMEOUT_MS, message: 'the write in the Impact tab' })
      .toBe('pending');
    // One status for one job (the panel once said "running" here while the bar said "waiting for approval").
    await expect
      .poll(() => p.locator('.part.statusbar').innerText(), { timeout: UI_TIMEOUT_MS })
      .toContain('— waiting for approval');
    await expect
      .poll(() => navTexts(p, '[data-testid="job-status-badge"]'), {
        timeout: UI_TIMEOUT_MS,
        message: "the side panel's status of the job held at its write",
      })
      .toEqual(['waiting for approval']);
    await screenshot(p, 'write-held-codelens', SUITE);

    // 5. ✓ Approve & run in the editor → the job runs it, finishes its todos and completes.
    await p.locator(CODELENS_LINK, { hasText: 'Approve & run' }).first().click();
    const done = await waitForStop(p, TASK, 'completed', STEP_TIMEOUT_MS);
    expect(done.status).toBe('completed');
    expect(done.text).toContain('Products 1, 2 and 3 each have 10 more units in stock.');
    await expect
      .poll(() => lensTexts(p), { timeout: UI_TIMEOUT_MS, message: 'the executed lens' })
      .toEqual(expect.arrayContaining([expect.stringMatching(/^Executed \d{2}:\d{2} · 3 rows$/)]));
    await expect
      .poll(
        async () =>
          (await cockpit(p, TASK))
            .locator('[data-testid="todo-item"]')
            .evaluateAll((items) => items.map((i) => i.getAttribute('data-status'))),
        { timeout: UI_TIMEOUT_MS },
      )
      .toEqual(['done', 'done']);
    await expect
      .poll(() => texts(p, TASK, '[data-testid="job-usage"]'), { timeout: UI_TIMEOUT_MS })
      .toEqual([expect.stringMatching(/^\d+ model calls · [\d,]+ in \/ [\d,]+ out tokens/)]);
    expect(await navTexts(p, '[data-testid="job-status-badge"]')).toEqual(['completed']);
    expect(
      await (
        await cockpit(p, TASK)
      )
        .locator('[data-testid="approve-plan-button"], [data-testid="cancel-job-button"]')
        .count(),
      'no actions on a finished job',
    ).toBe(0);
    await screenshot(p, 'job-completed', SUITE);
    // Retention for a real VS Code job (the window passes its checkpointer in): a finished job keeps its stops
    // (plan reviews, the held write) and its newest checkpoint, nothing in between.
    await expect
      .poll(() => checkpointsBeyondRetention(suite.workspace(), TASK), {
        timeout: UI_TIMEOUT_MS,
        message: 'checkpoints kept beyond the stops and the newest',
      })
      .toEqual({ stops: expect.any(Number) as number, extra: 0 });
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });

  it('keeps a job waiting for review across a window reload, still reviewable', { timeout: 300_000 }, async () => {
    const p = workbench();
    model().script([
      strategicTurn(TASK_2, [
        { name: 'write_workspace', args: { content: `# ${TASK_2}\n` } },
        { name: 'write_plan', args: { content: PLAN_2 } },
        {
          name: 'write_todos',
          args: {
            todos: [
              {
                id: 'list',
                title: 'List customers without orders',
                sql: 'SELECT c.id FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)',
              },
            ],
          },
        },
      ]),
      strategicTurn(TASK_2, [{ name: 'plan_ready', args: { summary: 'One read.' } }]),
    ]);
    await newJob(p, TASK_2);
    await waitForStop(p, TASK_2, 'review', STEP_TIMEOUT_MS, /cycle 1/);
    await screenshot(p, 'reload-before', SUITE);
    const requestsBefore = model().requests.length;

    await p.reload();
    await p.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    await p.locator(ACTIVITY_ITEM).first().waitFor({ state: 'visible', timeout: 60_000 });
    const before = (await seenNotifications(p)).length;
    await runCommand(p, 'Postgres Agent: Show Review Panel');
    // The job from the side panel: its cockpit (the tab kept by the reload, not a second one).
    await (await navigator(p)).locator('[data-testid="job-item"]', { hasText: TASK_2 }).click();
    const after = await waitForStop(p, TASK_2, 'review', STEP_TIMEOUT_MS, /cycle 1/);
    await expect
      .poll(() => p.locator('.part.editor .tabs-container .tab', { hasText: TASK_2.slice(0, 20) }).count(), {
        timeout: UI_TIMEOUT_MS,
        message: 'one tab of the job',
      })
      .toBe(1);
    expect(after.status).toBe('pending_review');
    await expect
      .poll(() => texts(p, TASK_2, '[data-testid="plan-md"] li'), { timeout: UI_TIMEOUT_MS })
      .toEqual(['List customers that have no orders.']);
    expect(await navTexts(p, '[data-testid="job-item"]')).toEqual([
      expect.stringContaining(TASK_2),
      expect.stringContaining(TASK),
    ]);
    const actions = (await cockpit(p, TASK_2)).locator(
      '[data-testid="approve-plan-button"], [data-testid="request-changes-button"], [data-testid="skip-review-button"], [data-testid="cancel-job-button"]',
    );
    expect(await actions.count(), 'the review actions after the reload').toBe(4);
    expect(model().requests.length, 'a reload spends no tokens').toBe(requestsBefore);
    await screenshot(p, 'reload-after-still-reviewable', SUITE);
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });

  it(
    'pauses a job while it plans; Continue picks it up without asking the model again',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      const before = (await seenNotifications(p)).length;
      const planTools = [
        { name: 'write_workspace', args: { content: `# ${TASK_3}\n` } },
        { name: 'write_plan', args: { content: PLAN_3 } },
        {
          name: 'write_todos',
          args: {
            todos: [
              {
                id: 'count',
                title: 'Count orders by status',
                sql: 'SELECT status, count(*) FROM orders GROUP BY status',
              },
            ],
          },
        },
      ];
      model().script([
        { match: of(TASK_3, strategic), reply: { delayMs: THINKING_MS, then: { functionCalls: planTools } } },
        strategicTurn(TASK_3, [{ name: 'plan_ready', args: { summary: 'One read.' } }]),
      ]);
      const asked = () => model().requests.filter(of(TASK_3, strategic)).length;
      await newJob(p, TASK_3);
      await expect.poll(asked, { timeout: STEP_TIMEOUT_MS, message: 'the first planning request' }).toBe(1);
      await click(p, TASK_3, 'pause-job-button');
      await expect
        .poll(async () => (await jobState(p, TASK_3))?.text ?? '', { timeout: UI_TIMEOUT_MS })
        .toContain('Pausing after the current step');
      await screenshot(p, 'pause-asked', SUITE);

      // The model's answer is kept; the job stops at the next step boundary.
      const paused = await waitForStop(p, TASK_3, 'frozen');
      expect(paused.status).toBe('frozen');
      expect(asked(), 'requests while paused').toBe(1);
      // The answer that arrived after the pause is kept, but none of its tool calls ran: no plan yet.
      const jobDir = jobFolder(suite.workspace(), TASK_3);
      expect(auditedToolCalls(jobDir), 'tool calls run after the pause').toEqual([]);
      expect(existsSync(join(jobDir, 'plan.md')) ? readFileSync(join(jobDir, 'plan.md'), 'utf8') : '').not.toContain(
        'Count orders grouped by status.',
      );
      const pausedActions = await texts(
        p,
        TASK_3,
        '[data-testid="continue-job-button"], [data-testid="pause-job-button"], [data-testid="cancel-job-button"]',
      );
      expect(pausedActions).toEqual(['Continue', 'Cancel job']);
      await screenshot(p, 'paused', SUITE);

      await click(p, TASK_3, 'continue-job-button');
      await waitForStop(p, TASK_3, 'review', STEP_TIMEOUT_MS, /cycle 1/);
      expect(asked(), 'the answer given before the pause is not asked for again').toBe(2);
      await expect
        .poll(() => texts(p, TASK_3, '[data-testid="plan-md"] li'), { timeout: UI_TIMEOUT_MS })
        .toEqual(['Count orders grouped by status.']);
      await screenshot(p, 'paused-then-continued-to-review', SUITE);
      expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
    },
  );

  it(
    'a job driven elsewhere (a CLI) is shown as running there and is not started again',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      const before = (await seenNotifications(p)).length;
      // TASK_2 waits for review (the reload test). A `pg-agent job approve` in a terminal now holds it: its
      // lease names a live process of this machine, exactly as the CLI writes it.
      const jobDir = jobFolder(suite.workspace(), TASK_2);
      const jobId = basename(jobDir);
      const cli = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      const leases = join(suite.workspace(), '.pgagent', 'leases');
      mkdirSync(leases, { recursive: true });
      const since = new Date().toISOString();
      writeFileSync(
        join(leases, `${jobId}.json`),
        JSON.stringify({
          host: hostname(),
          pid: cli.pid,
          by: 'pg-agent job approve',
          since,
          expiresAt: Date.now() + 600_000,
          token: 1,
          nonce: 'cli',
        }),
      );
      try {
        const requests = model().requests.length;
        await (await navigator(p)).locator('[data-testid="job-item"]', { hasText: TASK_2 }).first().click();
        await waitForStop(p, TASK_2, 'review', STEP_TIMEOUT_MS, /cycle 1/);
        await click(p, TASK_2, 'approve-plan-button');
        const busy = (await cockpit(p, TASK_2)).locator('[data-testid="job-error"]');
        await expect
          .poll(async () => ((await busy.count()) > 0 ? busy.innerText() : ''), { timeout: UI_TIMEOUT_MS })
          .toContain(`is running in ${hostname()}:${cli.pid} (pg-agent job approve) since ${since.slice(11, 19)} UTC`);
        await p
          .locator('.notifications-toasts .notification-toast', { hasText: 'is running in' })
          .first()
          .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
        await screenshot(p, 'running-elsewhere', SUITE);
        const after = await jobState(p, TASK_2);
        expect(after?.status, 'not started again').toBe('pending_review');
        expect(model().requests.length, 'no model call').toBe(requests);
        expect(await suite.errorsSince(before), 'a job busy elsewhere is no error').toEqual([]);
      } finally {
        cli.kill('SIGKILL');
      }
    },
  );

  it('keeps the job view readable in light, dark and high-contrast themes', { timeout: 300_000 }, async () => {
    const p = workbench();
    // The first job: a completed job with two review cycles, its plan diff shown.
    await (await navigator(p)).locator('[data-testid="job-item"]', { hasText: TASK }).click();
    await waitForStop(p, TASK, 'completed');
    await click(p, TASK, 'plan-diff-toggle');
    await (
      await cockpit(p, TASK)
    )
      .locator('[data-testid="plan-diff"]')
      .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await readableInEveryTheme(p, suite.workspace(), SUITE, [
      { frame: () => cockpit(p, TASK), readable: COCKPIT_READABLE },
      { frame: () => navigator(p), readable: NAVIGATOR_READABLE },
    ]);
  });
});

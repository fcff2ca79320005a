// "Ask…" in a real VS Code (code-server + Chromium) against the scripted Gemini server: a read question
// lands in the panel with its summary, its rows in the Results view; a write question goes to the inline approval and runs
// once approved; a write still waiting survives a window reload and can be approved after it.
// Screenshots of each step: test-artifacts/e2e/ask/ (VS Code's logs under logs/).
import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../support/scriptedModelServer';
import { shownResult, type ShownResult } from './harness/results';
import { workbenchSuite } from './harness/suite';
import { ACTIVITY_ITEM, RISK_LENS, runCommand, screenshot, seenNotifications } from './harness/workbench';
import { cardStatus, clickLens, clickOnCard, lensTexts, waitForCardStatus } from './harness/approvalCards';

const SUITE = 'ask';
const ASK = 'Postgres Agent: Ask…';
const ANSWER = '[data-testid="answer"]';

// The first ask also generates the sample database.
const SAMPLE_DB_TIMEOUT_MS = 120_000;
const WRITE_TIMEOUT_MS = 60_000;
const UI_TIMEOUT_MS = 30_000;

// What each node of the ask graph tells the model first (src/core/ask): stable text to match on.
const INTENT_PROMPT = 'Classify a question about a PostgreSQL database';
const SQL_PROMPT = 'You write one PostgreSQL statement';
const SUMMARY_PROMPT = 'Answer the question in one or two plain sentences';

interface Answer {
  status: string;
  question: string;
  sql: string;
  /** "1 row · 1 column · 12 ms": the rows themselves open in the Results view. */
  rows: string;
  summary: string;
  executed: string;
  error: string;
  usage: string;
}

const suite = workbenchSuite(SUITE, { withModel: true });
const workbench = () => suite.page();
const model = () => suite.model();

function webviewFrames(p: Page): Frame[] {
  return p.frames().filter((frame) => frame !== p.mainFrame() && !frame.isDetached());
}

/** The panel's answer section, or undefined while there is none. */
async function answer(p: Page): Promise<Answer | undefined> {
  for (const frame of webviewFrames(p)) {
    try {
      const found = await frame.locator(ANSWER).evaluateAll((elements) =>
        elements.map((section) => {
          const text = (selector: string) => section.querySelector(selector)?.textContent?.trim() ?? '';
          return {
            status: section.getAttribute('data-status') ?? '',
            question: text('[data-testid="answer-question"]'),
            sql: text('[data-testid="answer-sql"]'),
            rows: text('[data-testid="rows-count"]'),
            summary: text('[data-testid="answer-summary"]'),
            executed: text('[data-testid="answer-executed"]'),
            error: text('[data-testid="answer-error"]'),
            usage: text('[data-testid="answer-usage"]'),
          };
        }),
      );
      if (found[0]) return found[0];
    } catch {
      // The frame went away while we read it.
    }
  }
  return undefined;
}

/** The headers and first row of the question's rows in the Results view (its tab is titled by the question). */
async function resultOf(p: Page, question: string): Promise<{ headers: string[]; firstRow: string[] }> {
  let shown: ShownResult | undefined;
  await expect
    .poll(async () => (shown = await shownResult(p))?.title, {
      timeout: UI_TIMEOUT_MS,
      message: `the rows of "${question}" in the Results view`,
    })
    .toBe(question.slice(0, 40));
  return { headers: shown?.headers ?? [], firstRow: shown?.firstRow ?? [] };
}

/** Clicks a recent ask in the navigator (the side panel). */
async function openRecentAsk(p: Page, question: string): Promise<void> {
  await expect
    .poll(
      async () => {
        for (const frame of webviewFrames(p)) {
          const item = frame.locator('[data-testid="recent-ask"]', { hasText: question }).first();
          if ((await item.count().catch(() => 0)) > 0) {
            await item.click();
            return true;
          }
        }
        return false;
      },
      { timeout: UI_TIMEOUT_MS, message: `"${question}" among the recent asks` },
    )
    .toBe(true);
}

/** The model's three answers to one question: intent, SQL, and (for reads) a summary. */
function scriptQuestion(question: string, operation: 'read' | 'write', sql: string, summary?: string): void {
  const about = (prompt: string) => (req: RecordedRequest) => req.text.includes(prompt) && req.text.includes(question);
  model().script([
    { match: about(INTENT_PROMPT), reply: { json: { operation, tables: ['orders'], confidence: 0.9 } } },
    {
      match: about(SQL_PROMPT),
      reply: { json: { sql, operation, explanation: `The ${operation} the question asks for.` } },
    },
    ...(summary === undefined ? [] : [{ match: about(SUMMARY_PROMPT), reply: { text: summary } }]),
  ]);
}

/**
 * Palette → Ask… → types the question (the first item of the picker) → Enter. Not the harness's runCommand:
 * it waits for the palette to close, and Ask… reopens the same widget at once with its own picker.
 */
async function ask(p: Page, question: string): Promise<void> {
  const widget = p.locator('.quick-input-widget');
  const title = widget.locator('.quick-input-title', { hasText: 'Postgres Agent: Ask' });
  const deadline = Date.now() + UI_TIMEOUT_MS;
  for (;;) {
    await p.keyboard.press('F1');
    await widget.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await p.keyboard.type(ASK);
    try {
      await widget
        .locator('.monaco-list-row.focused', { hasText: ASK })
        .first()
        .waitFor({ state: 'visible', timeout: 5_000 });
      await p.keyboard.press('Enter');
      break;
    } catch (error) {
      await p.keyboard.press('Escape');
      if (Date.now() > deadline) throw new Error(`The palette has no "${ASK}"`, { cause: error });
    }
  }
  await title.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  await p.keyboard.type(question);
  await widget
    .locator('.monaco-list-row.focused', { hasText: question })
    .first()
    .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  await p.keyboard.press('Enter');
  await widget.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

async function waitForAnswer(p: Page, question: string, status: string, timeout = WRITE_TIMEOUT_MS): Promise<Answer> {
  await expect
    .poll(
      async () => {
        const a = await answer(p);
        return a?.question === question ? a.status : `(${a?.status ?? 'no answer'} for "${a?.question ?? ''}")`;
      },
      { timeout, interval: 250, message: `the answer to "${question}"` },
    )
    .toBe(status);
  const a = await answer(p);
  if (a === undefined) throw new Error('The answer went away');
  return a;
}

/** Clicks "Approve & run" (in the editor's CodeLens or the panel card) and confirms the modal of a HIGH write. */
/** Asks a write question the model answers with `sql`: the answer says held, and its card waits in the panel. */
async function askWrite(p: Page, question: string, sql: string): Promise<void> {
  scriptQuestion(question, 'write', sql);
  await ask(p, question);
  await waitForAnswer(p, question, 'held');
  await waitForCardStatus(suite, sql, 'pending', { timeout: WRITE_TIMEOUT_MS, message: 'a pending card' });
}

async function approveAndWait(p: Page, sql: string, click: () => Promise<void>): Promise<void> {
  await click();
  const dialog = p.locator('.monaco-dialog-box');
  const deadline = Date.now() + WRITE_TIMEOUT_MS;
  while ((await cardStatus(p, sql)) === 'pending') {
    if (await dialog.isVisible()) {
      await screenshot(p, 'approve-modal', SUITE);
      await dialog.locator('.monaco-button', { hasText: 'Approve & run' }).first().click();
      await dialog.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
    }
    if (Date.now() > deadline) throw new Error(`The card for ${sql} is still pending after approving`);
    await p.waitForTimeout(200);
  }
  await expect
    .poll(() => cardStatus(p, sql), { timeout: WRITE_TIMEOUT_MS, message: `the card for ${sql}` })
    .toBe('executed');
}

describe('Ask… in VS Code', () => {
  it('answers a read question in the panel with its summary and usage, its rows in the Results view', async () => {
    const p = workbench();
    const before = (await seenNotifications(p)).length;
    const question = 'how many orders are there';
    const summary = 'There are 10,000 orders.';
    scriptQuestion(question, 'read', 'SELECT count(*) AS n FROM orders', summary);
    await ask(p, question);
    const a = await waitForAnswer(p, question, 'answered', SAMPLE_DB_TIMEOUT_MS);
    await screenshot(p, 'read-answered', SUITE);
    expect(a.sql).toBe('SELECT count(*) AS n FROM orders');
    expect(a.rows).toMatch(/^1 row · 1 column · [\d,]+ ms$/);
    expect(await resultOf(p, question)).toEqual({ headers: ['n'], firstRow: ['10000'] });
    expect(a.summary).toBe(summary);
    expect(a.usage, 'tokens of the three scripted calls').toMatch(/^3 model calls · 3,000 in \/ 600 out tokens/);
    const sqlRequest = model().requests.find((r) => r.text.includes(SQL_PROMPT) && r.text.includes(question));
    expect(sqlRequest, 'the SQL-writing request').toBeDefined();
    const schemaPart = sqlRequest?.text.slice(sqlRequest.text.indexOf('Schema:')) ?? '';
    expect(schemaPart, 'the schema context shown to the model').toContain('orders');
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });

  it('hands a write question to the inline approval and runs it once approved', async () => {
    const p = workbench();
    const before = (await seenNotifications(p)).length;
    const question = 'delete order 5';
    const sql = 'DELETE FROM orders WHERE id = 5';
    await askWrite(p, question, sql);
    await expect
      .poll(() => lensTexts(p), {
        timeout: UI_TIMEOUT_MS,
        interval: 250,
        message: 'the pending CodeLenses above the asked write',
      })
      .toEqual(expect.arrayContaining([expect.stringMatching(RISK_LENS), 'Approve & run', 'Reject']));
    await screenshot(p, 'write-held-codelens', SUITE);
    const count = 'how many orders have id 5';
    scriptQuestion(count, 'read', 'SELECT count(*) AS n FROM orders WHERE id = 5', 'No order has id 5.');

    await approveAndWait(p, sql, () => clickLens(p, 'Approve & run'));
    const done = await waitForAnswer(p, question, 'executed');
    expect(done.executed).toMatch(/^Executed: [\d,]+ rows changed\.$/);
    await screenshot(p, 'write-executed', SUITE);

    await ask(p, count);
    await waitForAnswer(p, count, 'answered');
    expect((await resultOf(p, count)).firstRow, 'orders with id 5 after the approved delete').toEqual(['0']);
    await screenshot(p, 'count-after-delete', SUITE);

    // The first question's rows are still kept: a click on it among the recent asks shows them as they were.
    await openRecentAsk(p, 'how many orders are there');
    expect(await resultOf(p, 'how many orders are there')).toEqual({ headers: ['n'], firstRow: ['10000'] });
    await screenshot(p, 'recent-ask-reopened', SUITE);
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });

  it('keeps a held ask write across a window reload, and it can still be approved', async () => {
    const p = workbench();
    const question = 'delete order 6';
    const sql = 'DELETE FROM orders WHERE id = 6';
    await askWrite(p, question, sql);
    await screenshot(p, 'reload-before', SUITE);

    await p.reload();
    await p.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    await p.locator(ACTIVITY_ITEM).first().waitFor({ state: 'visible', timeout: 60_000 });
    const before = (await seenNotifications(p)).length;
    await runCommand(p, 'Postgres Agent: Show Review Panel');
    await expect
      .poll(() => cardStatus(p, sql), {
        timeout: SAMPLE_DB_TIMEOUT_MS,
        interval: 250,
        message: 'the held card after the reload',
      })
      .toBe('pending');
    await screenshot(p, 'reload-after-card-restored', SUITE);

    const count = 'how many orders have id 6';
    scriptQuestion(count, 'read', 'SELECT count(*) AS n FROM orders WHERE id = 6', 'No order has id 6.');
    await approveAndWait(p, sql, () => clickOnCard(p, sql, 'approve-button'));
    await waitForAnswer(p, question, 'executed');
    await screenshot(p, 'reload-approved-executed', SUITE);
    await ask(p, count);
    await waitForAnswer(p, count, 'answered');
    expect((await resultOf(p, count)).firstRow, 'orders with id 6 after approving across the reload').toEqual(['0']);

    // Rows from before the reload are not kept: a recent ask's read runs again (READ ONLY), in a tab saying so.
    await openRecentAsk(p, 'how many orders are there');
    expect(await resultOf(p, 'how many orders are there (run again)'), 'orders 5 and 6 deleted since').toEqual({
      headers: ['n'],
      firstRow: ['9998'],
    });
    await screenshot(p, 'recent-ask-run-again', SUITE);
    expect(await suite.errorsSince(before), 'error notifications').toEqual([]);
  });
});

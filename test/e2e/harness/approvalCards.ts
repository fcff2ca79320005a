// What a person sees of a held write in the workbench: the CodeLenses above it in the editor, and its approval
// card (status, risk, impact, locks, lint, reach, way back, warnings, buttons) in whichever webview shows it;
// and the ticket files behind them in the workspace.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { WorkbenchSuite } from './suite';
import { clickEditorLine, CODELENS_LINK } from './workbench';

/** An approval card, in the side panel or another webview. */
export const APPROVAL_CARD = '[data-testid="approval-card"]';

/** An approval card as shown; texts have their white space folded. */
export interface ApprovalCardSeen {
  status: string;
  /** The held statement(s) exactly as the card shows them (line breaks kept, trimmed). */
  sql: string;
  /** The risk badge: LOW, MEDIUM, HIGH or CRITICAL. */
  risk: string;
  /** One line per impact row, e.g. "order_items 9 deleted (cascade)". */
  impact: string[];
  /** The test ids of its buttons (approve-button, reject-button, use-safer-button, undo-button…). */
  buttons: string[];
  /** Every line shown as a warning (lock lines, findings and reach entries that warn included). */
  warnings: string[];
  /** "Blocks writes of public.orders — … (SHARE)". */
  locks: string[];
  lint: { rule: string; text: string; safer: string }[];
  /** Why the statement cannot be rolled back ('' when it can). */
  notTransactional: string;
  /** The sessions holding a conflicting lock ("In the way: pid …"). */
  holders: string[];
  wayBack: { way: string; text: string }[];
  /** What the database's own code reached (functions, triggers), with the verdict on each. */
  reach: { verdict: string; text: string }[];
  /** The note of a transaction held by the guard ("3 statements in order…"; '' otherwise). */
  transaction: string;
}

/** The frames of the page's webviews (a webview's content sits two iframes deep). */
function webviewFrames(page: Page): Frame[] {
  return page.frames().filter((frame) => frame !== page.mainFrame() && !frame.isDetached());
}

/** Every approval card the webviews show, frame by frame in page order. */
export async function approvalCards(page: Page): Promise<ApprovalCardSeen[]> {
  const cards: ApprovalCardSeen[] = [];
  for (const frame of webviewFrames(page)) {
    try {
      cards.push(
        ...(await frame.locator(APPROVAL_CARD).evaluateAll((elements) =>
          elements.map((card) => {
            const text = (node: Element | null) =>
              (node instanceof HTMLElement ? node.innerText : (node?.textContent ?? '')).replace(/\s+/g, ' ').trim();
            const texts = (selector: string) => [...card.querySelectorAll(selector)].map(text);
            return {
              status: card.getAttribute('data-status') ?? '',
              sql: card.querySelector('pre.sql')?.textContent?.trim() ?? '',
              risk: text(card.querySelector('[data-testid="risk-badge"]')),
              impact: texts('[data-testid="impact-row"]'),
              buttons: [...card.querySelectorAll('vscode-button[data-testid]')].map(
                (b) => b.getAttribute('data-testid') ?? '',
              ),
              warnings: texts('.warning-text'),
              locks: texts('[data-testid="lock-line"]'),
              lint: [...card.querySelectorAll('[data-testid="lint-finding"]')].map((finding) => ({
                rule: finding.getAttribute('data-rule') ?? '',
                text: text(finding),
                safer: text(finding.querySelector('[data-testid="safer-sql"]')),
              })),
              notTransactional: text(card.querySelector('[data-testid="not-transactional"]')),
              holders: texts('[data-testid="lock-holder"]'),
              wayBack: [...card.querySelectorAll('[data-testid="way-back"]')].map((e) => ({
                way: e.getAttribute('data-way') ?? '',
                text: text(e),
              })),
              reach: [...card.querySelectorAll('[data-testid="reach-entry"]')].map((e) => ({
                verdict: e.getAttribute('data-verdict') ?? '',
                text: text(e),
              })),
              transaction: text(card.querySelector('[data-testid="guard-transaction"]')),
            };
          }),
        )),
      );
    } catch {
      // Detached while we read it.
    }
  }
  return cards;
}

/** The newest card of exactly this SQL, or undefined while there is none. */
export async function approvalCard(page: Page, sql: string): Promise<ApprovalCardSeen | undefined> {
  return (await approvalCards(page)).filter((card) => card.sql === sql).at(-1);
}

/** The status of the newest approval card of exactly this SQL (undefined: none yet). */
export async function cardStatus(page: Page, sql: string): Promise<string | undefined> {
  return (await approvalCard(page, sql))?.status;
}

/**
 * Waits until the card of exactly `sql` shows `status` (a failure lists the notifications shown) and returns it.
 */
export async function waitForCardStatus(
  suite: Pick<WorkbenchSuite, 'page' | 'explained'>,
  sql: string,
  status: string,
  options: { timeout: number; message?: string },
): Promise<ApprovalCardSeen> {
  const page = suite.page();
  await suite.explained(() =>
    expect
      .poll(() => cardStatus(page, sql), {
        timeout: options.timeout,
        interval: 250,
        message: options.message ?? `the card of ${sql} ${status}`,
      })
      .toBe(status),
  );
  const card = await approvalCard(page, sql);
  if (card === undefined) throw new Error(`The card of ${sql} went away`);
  return card;
}

/** The card(s) of exactly this SQL, in the webview that shows them; throws while none does. */
export async function cardOf(page: Page, sql: string): Promise<Locator> {
  for (const frame of webviewFrames(page)) {
    const card = frame.locator(`${APPROVAL_CARD}:has(pre.sql:text-is(${JSON.stringify(sql)}))`);
    if ((await card.count().catch(() => 0)) > 0) return card;
  }
  throw new Error(`No webview shows an approval card for ${sql}`);
}

/** Clicks the card's button `testid` (approve-button, reject-button, use-safer-button…). */
export async function clickOnCard(page: Page, sql: string, testid: string): Promise<void> {
  await (await cardOf(page, sql)).locator(`[data-testid="${testid}"]`).first().click();
}

/** Scrolls the card's line `testid` (reach, lock-holder, way-back…) into the picture, if the card shows it. */
export async function showCardLine(page: Page, sql: string, testid: string): Promise<void> {
  const line = (await cardOf(page, sql).catch(() => undefined))?.locator(`[data-testid="${testid}"]`).first();
  if (line !== undefined && (await line.count().catch(() => 0)) > 0)
    await line.scrollIntoViewIfNeeded().catch(() => undefined);
}

/** The CodeLens texts of the open editor, white space folded. */
export async function lensTexts(page: Page): Promise<string[]> {
  return (await page.locator(CODELENS_LINK).allInnerTexts())
    .map((text) => text.replace(/\s+/g, ' ').trim())
    .filter((text) => text !== '');
}

/** Clicks the CodeLens saying `text` once it shows ("Approve & run", "Approve for the agent", "Run again"…). */
export async function clickLens(page: Page, text: string, timeout = 30_000): Promise<void> {
  const link = page.locator(CODELENS_LINK, { hasText: text }).first();
  await link.waitFor({ state: 'visible', timeout });
  await link.click();
}

/**
 * Clicks the editor's line holding `line` (VS Code refreshes the CodeLenses of the editor that has the keyboard,
 * and a card that showed took it), then waits until the CodeLens texts equal `expected` (a failure lists the
 * notifications shown); returns them.
 */
export async function lensesAbove(
  suite: Pick<WorkbenchSuite, 'page' | 'explained'>,
  line: string,
  expected: unknown,
  options: { timeout: number; message: string },
): Promise<string[]> {
  const page = suite.page();
  await clickEditorLine(page, line);
  await suite.explained(() =>
    expect
      .poll(() => lensTexts(page), { timeout: options.timeout, interval: 250, message: options.message })
      .toEqual(expected),
  );
  return lensTexts(page);
}

/** What a test reads of a ticket file; a caller wanting more names it in its own type. */
export interface TicketFile {
  id: string;
  sql: string;
  status: string;
}

/** The workspace's ticket files (.pgagent/approvals/tkt_*.json), parsed. */
export function ticketFiles<T extends TicketFile = TicketFile>(workspace: string): T[] {
  const dir = join(workspace, '.pgagent', 'approvals');
  return readdirSync(dir)
    .filter((name) => /^tkt_.*\.json$/.test(name))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as T);
}

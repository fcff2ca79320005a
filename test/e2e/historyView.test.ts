// The History view in a real VS Code (issue 33): two reads and an approved write run with Run SQL with Review on a
// server database; "Query History…" shows them in the History view, newest first, searched; "Run Again" on a read
// shows its rows in the results grid; on the write it holds a NEW ticket at the inline approval and nothing runs
// until Approve & run (asserted on the database and the ticket files).
// Screenshots of each step: test-artifacts/e2e/historyView/.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shownResult } from './harness/results';
import { workbenchSuite } from './harness/suite';
import { clickLens, lensesAbove, ticketFiles } from './harness/approvalCards';
import { pickCommand, reviewFile, screenshot, selectConnection, typeInQuickInput } from './harness/workbench';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { queryValue } from '../support/scratchDatabase';

const SUITE = 'historyView';
const UI_TIMEOUT_MS = 60_000;
const COUNT_SQL = 'SELECT count(*) AS n FROM i33h_items';
const FIRST_SQL = 'SELECT id, name, qty FROM i33h_items WHERE id <= 3 ORDER BY id';
const BUMP_SQL = 'UPDATE i33h_items SET qty = qty + 1 WHERE id = 1';
const QTY = 'SELECT qty FROM i33h_items WHERE id = 1';
const FILES: Record<string, string> = { 'count.sql': COUNT_SQL, 'first.sql': FIRST_SQL, 'bump.sql': BUMP_SQL };

describe('The History view: search, and Run Again through the inline approval', () => {
  let scratch: ScratchDatabase;
  let firstTicket: string | undefined;

  beforeAll(async () => {
    scratch = await createScratchDatabase('i33h_e2ehist');
    await execSql(
      scratch.url,
      `CREATE TABLE i33h_items (id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL);
       INSERT INTO i33h_items SELECT g, 'item ' || g, g * 10 FROM generate_series(1, 5) g;`,
    );
  });

  const suite = workbenchSuite(SUITE, {
    connections: () => ({ scratch }),
    prepare: (dir) => {
      for (const [name, sql] of Object.entries(FILES)) writeFileSync(join(dir, name), `${sql}\n`);
    },
  });

  afterAll(async () => {
    await scratch?.drop();
  }, 600_000);

  const tickets = () => ticketFiles(suite.workspace());

  /** The History view's pane. */
  const historyPane = (p: Page): Locator =>
    p.locator('.pane', { has: p.locator('.pane-header', { hasText: /^History/ }) }).first();
  const historyRow = (p: Page, text: string): Locator =>
    historyPane(p).locator('.monaco-list-row', { hasText: text }).first();
  const historyRows = async (p: Page): Promise<string[]> =>
    (await historyPane(p).locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());

  /** The Results view's active tab now, so that a wait for the next result is not satisfied by it. */
  let seenTab: string | undefined;
  const markSeen = async (p: Page) => {
    seenTab = (await shownResult(p))?.tabId;
  };
  const freshResult = async (p: Page) => {
    const shown = await shownResult(p);
    return shown && shown.tabId !== seenTab ? shown : undefined;
  };

  /** Opens or closes a side bar section by its header (the History view gets the room when Review is closed). */
  async function setSection(p: Page, title: string, expanded: boolean): Promise<void> {
    const header = p.locator('.pane-header', { hasText: new RegExp(`^${title}`) }).first();
    if ((await header.getAttribute('aria-expanded')) === String(expanded)) return;
    await header.locator('.title').first().click();
    await expect.poll(() => header.getAttribute('aria-expanded'), { timeout: UI_TIMEOUT_MS }).toBe(String(expanded));
  }

  /** Drags the side bar's edge to the right, so a statement's facts (when, ms, rows, origin, ticket) fit in the shots. */
  async function widenSideBar(p: Page): Promise<void> {
    const box = await p.locator('.part.sidebar').boundingBox();
    if (!box) return;
    const x = box.x + box.width + 1;
    const y = box.y + box.height / 2;
    await p.mouse.move(x, y);
    await p.mouse.down();
    await p.mouse.move(x + 300, y, { steps: 10 });
    await p.mouse.up();
  }

  async function filterHistory(p: Page, text: string): Promise<void> {
    await pickCommand(p, 'Postgres Agent: Query History…');
    await p
      .locator('.quick-input-widget .quick-input-title', { hasText: 'Filter the query history' })
      .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    // The box holds the current filter: replace it.
    await typeInQuickInput(p, '');
    await p.keyboard.press('Control+A');
    await p.keyboard.type(text);
    await p.keyboard.press('Enter');
  }

  /** The held UPDATE's "Approve & run" CodeLens, once the statement is clicked. */
  async function approvalLens(): Promise<void> {
    await lensesAbove(suite, 'UPDATE i33h_items', expect.arrayContaining(['Approve & run']), {
      timeout: UI_TIMEOUT_MS,
      message: 'the Approve & run CodeLens',
    });
  }

  async function clickRunAgain(p: Page, text: string): Promise<void> {
    const row = historyRow(p, text);
    await row.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await row.click();
    await row.hover();
    await row.locator('.action-label[aria-label="Run Again"]').click();
  }

  it('runs two reads and a write approved with its CodeLens', async () => {
    const p = suite.page();
    await selectConnection(p, 'scratch');

    await markSeen(p);
    await reviewFile(p, 'count.sql');
    await suite.explained(() =>
      expect.poll(async () => (await freshResult(p))?.firstRow, { timeout: UI_TIMEOUT_MS }).toEqual(['5']),
    );
    await markSeen(p);
    await reviewFile(p, 'first.sql');
    await expect.poll(async () => (await freshResult(p))?.rowCount, { timeout: UI_TIMEOUT_MS }).toBe(3);

    await reviewFile(p, 'bump.sql');
    await approvalLens();
    expect(await queryValue(scratch.url, QTY)).toBe(10);
    await clickLens(p, 'Approve & run');
    await expect.poll(() => queryValue(scratch.url, QTY), { timeout: UI_TIMEOUT_MS, interval: 500 }).toBe(11);
    const executed = tickets().filter((t) => t.sql.includes('UPDATE i33h_items'));
    expect(executed.map((t) => t.status)).toEqual(['EXECUTED']);
    firstTicket = executed[0]?.id;
    await screenshot(p, 'reads-and-approved-write', SUITE);
  });

  it('"Query History…" shows them in the History view, newest first, searched', async () => {
    const p = suite.page();
    await setSection(p, 'Review', false);
    await setSection(p, 'Schema', false);
    await widenSideBar(p);
    await filterHistory(p, 'i33h_items');
    await suite.explained(() => historyRow(p, BUMP_SQL).waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    await historyRow(p, COUNT_SQL).waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    // The database's node, then its statements newest first; the write names its ticket. The newest three: a retry
    // of the first test (CI retries once) runs its reads again, and the older ones stay in the history.
    const rows = await historyRows(p);
    const statements = rows.filter((r) => r.includes('i33h_items'));
    expect(statements.slice(0, 3).map((r) => r.slice(0, 20))).toEqual(
      [BUMP_SQL, FIRST_SQL, COUNT_SQL].map((sql) => sql.slice(0, 20)),
    );
    expect(statements[0]).toMatch(/\d{2}:\d{2}:\d{2} · [\d.]+ ms · 1 row · vscode · tkt_/);
    expect(statements[0]).toContain(firstTicket ?? 'no ticket');
    expect(statements[1]).toMatch(/· 3 rows · vscode/);
    expect(rows.some((r) => r.includes(`${scratch.name}`) && /3\+? statements/.test(r))).toBe(true);
    await p.getByText('statements match “i33h_items”').first().waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await screenshot(p, 'history-view-searched', SUITE);

    await filterHistory(p, 'UPDATE');
    await expect
      .poll(async () => (await historyRows(p)).filter((r) => r.includes('i33h_items')).length, {
        timeout: UI_TIMEOUT_MS,
      })
      .toBe(1);
    expect((await historyRows(p)).some((r) => r.includes(BUMP_SQL.slice(0, 30)))).toBe(true);
    await screenshot(p, 'history-view-only-the-write', SUITE);
  });

  it('Run Again on a read shows its rows in the results grid', async () => {
    const p = suite.page();
    await filterHistory(p, 'count(*)');
    await markSeen(p);
    await clickRunAgain(p, COUNT_SQL);
    await suite.explained(() =>
      expect.poll(async () => (await freshResult(p))?.firstRow, { timeout: UI_TIMEOUT_MS }).toEqual(['5']),
    );
    await screenshot(p, 'run-again-read-rows', SUITE);
  });

  it('Run Again on the write holds a NEW ticket at the inline approval; nothing runs until approved', async () => {
    const p = suite.page();
    await filterHistory(p, 'UPDATE');
    await setSection(p, 'Review', true);
    await clickRunAgain(p, BUMP_SQL);
    const pending = () =>
      tickets().filter((t) => t.sql.includes('UPDATE i33h_items') && t.status === 'PENDING_APPROVAL');
    await suite.explained(() => expect.poll(() => pending().length, { timeout: UI_TIMEOUT_MS }).toBe(1));
    const again = pending()[0];
    expect(again?.id).not.toBe(firstTicket);
    expect(await queryValue(scratch.url, QTY)).toBe(11);

    await approvalLens();
    await screenshot(p, 'run-again-write-held-on-new-ticket', SUITE);
    expect(await queryValue(scratch.url, QTY)).toBe(11);

    await clickLens(p, 'Approve & run');
    await expect.poll(() => queryValue(scratch.url, QTY), { timeout: UI_TIMEOUT_MS, interval: 500 }).toBe(12);
    expect(tickets().find((t) => t.id === again?.id)?.status).toBe('EXECUTED');
    // The view follows the file: the second run of the write is listed.
    await expect
      .poll(async () => (await historyRows(p)).filter((r) => r.includes('UPDATE i33h_items')).length, {
        timeout: UI_TIMEOUT_MS,
      })
      .toBe(2);
    await screenshot(p, 'run-again-write-approved-and-listed', SUITE);
  });
});

// The schema explorer in a real VS Code (code-server + Chromium), as a person uses it: the native tree
// under the Postgres Agent icon on the sample database — schema → table → columns, keys, indexes — a
// filter, Show DDL, Select First 100 Rows into the results view, Copy Table Name; the approvals badge;
// Explain Query's plan tree in the bottom panel; all of it readable in light, dark and high contrast.
// Everything after the first command is done with the mouse (and Enter in menus), so no webview can keep
// the keyboard from a step.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createScratchDatabase, execSql } from '../support/services';
import { SHOP_SCHEMA } from '../support/shopSchema';
import { workbenchSuite } from './harness/suite';
import { teammateCli } from './harness/teammate';
import { readableInEveryTheme } from './harness/themes';
import {
  findWebviewFrame,
  notificationTexts,
  openFile,
  runCommand,
  screenshot,
  typeInQuickInput,
} from './harness/workbench';
import { schemaTreeLabels, schemaTreeRow } from './harness/schemaTreeRows';

const SUITE = 'schema-tree';
const UI_TIMEOUT_MS = 30_000;
const SAMPLE_DB_TIMEOUT_MS = 60_000;
/** The results view's texts whose contrast is measured in each theme. */
const RESULTS_READABLE = [
  '[data-testid="column-header"] .name',
  '[data-testid="column-header"] .type',
  '[data-testid="result-row"] .cell',
  '[data-testid="results-summary"]',
  '[data-testid="result-tab"]',
] as const;

/** Clicks an action in the Schema view's title bar (no keyboard needed, whichever view has it). */
async function titleAction(p: Page, label: string): Promise<void> {
  const header = p.locator('.pane-header[aria-label^="Schema"]').first();
  await header.hover();
  await header.locator(`.action-label[aria-label^="${label}"]`).first().click();
}

/** Right-clicks a row and picks a context-menu item. */
async function contextMenu(p: Page, label: string, item: string): Promise<void> {
  await pickFromContextMenu(p, schemaTreeRow(p, label), item);
}

/** Right-clicks `target` and picks a context-menu item. */
async function pickFromContextMenu(p: Page, target: Locator, item: string): Promise<void> {
  await target.click({ button: 'right' });
  const entry = p.locator('.context-view .action-menu-item', { hasText: item }).first();
  await entry.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  // The menu acts on the item under the pointer when Enter is pressed (a synthetic click can land as the
  // menu settles and be taken for a click outside it).
  await entry.hover();
  await p.keyboard.press('Enter');
  await p.locator('.context-view .monaco-menu').first().waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

/** Shows a view container by its activity-bar icon (the item, not its label: a badge on the label takes the click). */
async function showActivity(p: Page, label: string): Promise<void> {
  const item = p.locator(`.activitybar .action-item:has(.action-label[aria-label^="${label}"])`).first();
  // A click on the icon of the container already shown would hide the side bar.
  if (await item.evaluate((e) => e.classList.contains('checked') || e.querySelector('.checked') !== null)) return;
  await item.click();
}

/** The text editor of the active editor group (the results view may have opened a second group). */
function activeEditorLines(p: Page): Locator {
  return p.locator('.part.editor .editor-group-container.active .monaco-editor .view-lines').first();
}

/** The visible lines of the active editor (Monaco draws spaces as no-break spaces). */
async function editorText(p: Page): Promise<string> {
  return (await activeEditorLines(p).innerText()).replace(/\u00a0/g, ' ');
}

describe('the schema explorer, the results view, the approvals badge and Explain Query', () => {
  const suite = workbenchSuite(SUITE, {
    prepare: (workspace) => writeFileSync(join(workspace, 'first.sql'), 'SELECT * FROM public.customers LIMIT 100;\n'),
  });
  const workbench = () => suite.page();
  const explained = (check: () => Promise<void>) => suite.explained(check);

  it('browses schema → table → columns and keys of the sample database', { timeout: 300_000 }, async () => {
    const p = workbench();
    await runCommand(p, 'Postgres Agent: Open Sample Database');
    // Opening the database shows the Postgres Agent side bar, the Schema view under Review.
    await p.locator('.pane-header[aria-label^="Schema"]').first().waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    // The Review view above it collapsed, so the tree has the side bar's height.
    const review = p.locator('.pane-header[aria-label^="Review"]').first();
    if ((await review.getAttribute('aria-expanded')) === 'true') await review.click();
    await explained(() =>
      expect
        .poll(() => schemaTreeLabels(p), { timeout: SAMPLE_DB_TIMEOUT_MS, message: 'the public schema in the tree' })
        .toContain('public'),
    );
    await schemaTreeRow(p, 'public').click();
    await explained(() =>
      expect
        .poll(() => schemaTreeLabels(p), { timeout: UI_TIMEOUT_MS })
        .toEqual(expect.arrayContaining(['customers', 'orders', 'order_items'])),
    );
    await schemaTreeRow(p, 'orders').click();
    await explained(() =>
      expect
        .poll(() => schemaTreeLabels(p), { timeout: UI_TIMEOUT_MS })
        .toEqual(expect.arrayContaining(['customer_id', 'Keys', 'Indexes'])),
    );
    const customerId = await schemaTreeRow(p, 'customer_id').locator('.label-description').innerText();
    expect(customerId).toMatch(/→ customers\.id/);
    await schemaTreeRow(p, 'Keys').click();
    await explained(() => expect.poll(() => schemaTreeLabels(p), { timeout: UI_TIMEOUT_MS }).toContain('PRIMARY KEY'));
    await screenshot(p, 'tree-orders-expanded', SUITE);
  });

  it('filters the tables by name, and clears the filter', { timeout: 300_000 }, async () => {
    const p = workbench();
    await titleAction(p, 'Filter Tables…');
    await typeInQuickInput(p, 'order_it');
    await p.keyboard.press('Enter');
    await explained(() =>
      expect
        .poll(() => schemaTreeLabels(p), { timeout: UI_TIMEOUT_MS, message: 'only order_items left' })
        .toEqual(['public', 'order_items']),
    );
    expect(await p.locator('.pane:has(.pane-header[aria-label^="Schema"]) .pane-body').innerText()).toContain(
      'Filter: "order_it"',
    );
    await screenshot(p, 'tree-filtered', SUITE);
    await titleAction(p, 'Clear Table Filter');
    await schemaTreeRow(p, 'public').waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await explained(() => expect.poll(() => schemaTreeLabels(p), { timeout: UI_TIMEOUT_MS }).toContain('customers'));
  });

  it(
    'Show DDL opens the table as CREATE TABLE; Copy Table Name says what it copied',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      await contextMenu(p, 'orders', 'Show DDL');
      await explained(() =>
        expect
          .poll(() => editorText(p), { timeout: UI_TIMEOUT_MS, message: 'the DDL in an editor' })
          .toContain('CREATE TABLE public.orders'),
      );
      expect(await editorText(p)).toMatch(/FOREIGN KEY \(customer_id\) REFERENCES public\.customers/);
      await screenshot(p, 'show-ddl', SUITE);
      await contextMenu(p, 'orders', 'Copy Table Name');
      await explained(() =>
        expect
          .poll(() => p.locator('.part.statusbar').innerText(), { timeout: UI_TIMEOUT_MS })
          .toContain('copied public.orders'),
      );
    },
  );

  it(
    'Select First 100 Rows opens the rows in the results view: a grid that draws what is in view, sorts, copies',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      await contextMenu(p, 'customers', 'Select First 100 Rows');
      const frame = await findWebviewFrame(p, '[data-testid="results-grid"]');
      const grid = frame.locator('[data-testid="results-grid"]');
      await explained(() =>
        expect
          .poll(() => grid.getAttribute('aria-rowcount'), {
            timeout: UI_TIMEOUT_MS,
            message: 'the rows in the results view',
          })
          .toBe('101'),
      );
      await expect
        .poll(() => frame.locator('[data-testid="result-row"]').count(), { timeout: UI_TIMEOUT_MS })
        .toBeGreaterThan(0);
      expect(await frame.locator('[data-testid="result-row"]').count(), 'rows in the DOM (virtualized)').toBeLessThan(
        100,
      );
      expect(await frame.locator('[data-testid="results-summary"]').innerText()).toMatch(/^100 rows · \d+ ms$/);
      expect(await p.locator('.tabs-container .tab', { hasText: 'Results: customers: first 100 rows' }).count()).toBe(
        1,
      );
      await screenshot(p, 'results-view', SUITE);

      // Sort by email: the first row becomes the alphabetically first email.
      const header = frame.locator('[data-testid="column-header"]', { hasText: 'email' }).first();
      await header.click();
      await expect.poll(() => header.getAttribute('aria-sort'), { timeout: UI_TIMEOUT_MS }).toBe('ascending');
      const emails = await frame
        .locator('[data-testid="result-row"]')
        .evaluateAll((rows) => rows.map((r) => (r.children[1] as HTMLElement | undefined)?.innerText ?? ''));
      expect(emails.slice(0, 5)).toEqual([...emails.slice(0, 5)].sort((a, b) => a.localeCompare(b)));
      await screenshot(p, 'results-sorted', SUITE);

      // Copy a cell: the host copies its own value and says so.
      await frame.locator('[data-testid="result-row"] .cell').nth(1).click();
      await frame.locator('[data-testid="copy-cell"]').click();
      await explained(() =>
        expect
          .poll(() => p.locator('.part.statusbar').innerText(), { timeout: UI_TIMEOUT_MS })
          .toContain('copied the cell'),
      );

      // Export CSV: the save dialog proposes results.csv in the workspace; the file holds the header and the 100 rows.
      await frame.locator('[data-testid="export-csv"]').click();
      await typeInQuickInput(p, '');
      await screenshot(p, 'results-export-dialog', SUITE);
      await p.keyboard.press('Enter');
      const exported = join(suite.workspace(), 'results.csv');
      await explained(() =>
        expect.poll(() => existsSync(exported), { timeout: UI_TIMEOUT_MS, message: 'results.csv written' }).toBe(true),
      );
      const lines = readFileSync(exported, 'utf8').trimEnd().split('\n');
      expect(lines[0]).toMatch(/^id,email,/);
      expect(lines).toHaveLength(101);
      await explained(() =>
        expect
          .poll(() => notificationTexts(p), { timeout: UI_TIMEOUT_MS })
          .toContainEqual(expect.stringContaining('Exported 100 rows to')),
      );
    },
  );

  it(
    "counts a teammate's pending write on the activity-bar icon, and drops it once decided",
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      const scratch = await createScratchDatabase('pgagent_e2e_badge');
      try {
        await execSql(scratch.url, SHOP_SCHEMA);
        const cli = (argv: string[]) => teammateCli('teammate', suite.workspace(), argv, 'runner');
        // A teammate holds a write from a terminal in this workspace: exit 3, a ticket waits.
        const held = await cli([
          'sql',
          '--db',
          scratch.url,
          '--workspace',
          suite.workspace(),
          '--no-input',
          '--json',
          '--',
          "DELETE FROM orders WHERE status = 'cancelled' AND id <= 5",
        ]);
        expect(held.code, held.stderr).toBe(3);
        const ticket = (JSON.parse(held.stdout) as { ticket: { id: string } }).ticket.id;
        const badge = p.locator(
          '.activitybar .action-item:has(.action-label[aria-label^="Postgres Agent"]) .badge-content',
        );
        await explained(() =>
          expect
            .poll(() => badge.innerText().catch(() => ''), { timeout: UI_TIMEOUT_MS, message: 'the approvals badge' })
            .toBe('1'),
        );
        await screenshot(p, 'approvals-badge', SUITE);
        const rejected = await cli(['approvals', 'reject', ticket, '--workspace', suite.workspace()]);
        expect(rejected.code, rejected.stderr).toBe(0);
        await explained(() =>
          expect
            .poll(() => badge.isVisible(), { timeout: UI_TIMEOUT_MS, message: 'no badge once decided' })
            .toBe(false),
        );
      } finally {
        await scratch.drop();
      }
    },
  );

  it(
    'Explain Query shows the plan of a read as a tree in the bottom panel, the most expensive node marked',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      // The file opened with Quick Open, Explain Query from the editor's context menu.
      await openFile(p, 'first.sql');
      await explained(() =>
        expect.poll(() => editorText(p), { timeout: UI_TIMEOUT_MS }).toContain('SELECT * FROM public.customers'),
      );
      await pickFromContextMenu(p, activeEditorLines(p), 'Explain Query');
      const plan = p.locator('.pane:has(.pane-header[aria-label^="Query Plan"]) .monaco-list-row');
      await explained(() =>
        expect
          .poll(() => plan.locator('.label-name').allInnerTexts(), { timeout: UI_TIMEOUT_MS, message: 'the plan tree' })
          .toEqual(['Limit', 'Seq Scan on customers']),
      );
      expect(await plan.locator('.label-description').allInnerTexts()).toEqual([
        expect.stringMatching(/cost [\d.]+ · ~100 rows/),
        expect.stringMatching(/^most expensive · cost [\d.,]+ · ~[\d,]+ rows · 100 % of the plan$/),
      ]);
      await screenshot(p, 'explain-plan', SUITE);
    },
  );

  it(
    'the tree, the results and the plan stay readable in light, dark and high-contrast themes',
    { timeout: 300_000 },
    async () => {
      const p = workbench();
      // The tree in the side bar, the results in the editor area, the plan in the panel: one picture each theme.
      await showActivity(p, 'Postgres Agent');
      await schemaTreeRow(p, 'public').waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await p.locator('.tabs-container .tab', { hasText: 'Results' }).first().click();
      const results = () => findWebviewFrame(p, '[data-testid="results-grid"]');
      await (
        await results()
      )
        .locator('[data-testid="result-row"]')
        .first()
        .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await readableInEveryTheme(p, suite.workspace(), SUITE, [{ frame: results, readable: RESULTS_READABLE }]);
    },
  );
});

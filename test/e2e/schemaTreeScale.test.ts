// The Schema tree on a database of many schemas, in a real VS Code (code-server + Chromium), as a person uses
// it: the schemas with their table counts at the top, one schema expanded shows its first page of tables and a
// "Load more…" row, Load more shows the next page, and Find Table… picks a table by name among them all and
// reveals it, selected, in its schema (whose pages are loaded up to it); the side panel lists the first 200 tables
// and says how many more, its Find Table… button opening the same pick. Screenshots of each step:
// test-artifacts/e2e/schema-tree-scale/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { workbenchSuite } from './harness/suite';
import { findWebviewFrame, pickCommand, runCommand, screenshot, typeInQuickInput } from './harness/workbench';
import { schemaTreeLabels, schemaTreeRow, schemaTreeRows } from './harness/schemaTreeRows';

const SUITE = 'schema-tree-scale';
const MORE_TABLES = '[data-testid="more-tables"]';
const TABLE_ITEM = '[data-testid="table-item"]';
const fmt = (n: number) => n.toLocaleString('en-US');
const UI_TIMEOUT_MS = 60_000;
const SCHEMAS = 20;
const TABLES = 300;

const schemaName = (s: number) => `tenant_${String(s).padStart(2, '0')}`;
/** Names unique across schemas, so that Find Table… can be typed straight to one. */
const tableName = (s: number, i: number) => `s${String(s).padStart(2, '0')}_item_${String(i).padStart(4, '0')}`;

/** Pages the focused tree down (it draws only the rows in view) until `target` is drawn. */
async function pageDownTo(p: Page, target: Locator): Promise<void> {
  for (let i = 0; i < 30 && !(await target.isVisible()); i++) {
    await p.keyboard.press('PageDown');
    await p.waitForTimeout(200);
  }
  await target.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
}

describe('the Schema tree on 20 schemas × 300 tables: by schema, a page at a time, Find Table…', () => {
  let scratch: ScratchDatabase;

  beforeAll(async () => {
    scratch = await createScratchDatabase('tree50k_e2e');
    for (let s = 1; s <= SCHEMAS; s++) {
      const ddl = [`CREATE SCHEMA ${schemaName(s)};`];
      for (let i = 0; i < TABLES; i++)
        ddl.push(`CREATE TABLE ${schemaName(s)}.${tableName(s, i)} (id int PRIMARY KEY, name text, amount numeric);`);
      await execSql(scratch.url, ddl.join('\n'));
    }
  }, 600_000);

  const suite = workbenchSuite(SUITE, {
    prepare: (dir) => {
      const url = new URL(scratch.url);
      mkdirSync(join(dir, '.pgagent'), { recursive: true });
      writeFileSync(
        join(dir, '.pgagent', 'config.json'),
        JSON.stringify({
          connections: [
            {
              name: 'many-schemas',
              host: url.hostname,
              port: Number(url.port || 5432),
              database: scratch.name,
              user: decodeURIComponent(url.username),
            },
          ],
        }),
      );
    },
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  it('shows the schemas with their table counts; a schema opens on its first page and Load more…', async () => {
    const p = suite.page();
    await pickCommand(p, 'Postgres Agent: Select Connection…');
    await typeInQuickInput(p, 'many-schemas');
    await p.keyboard.press('Enter');
    // The Postgres Agent side bar, by its activity-bar icon (unless it shows already: a click would hide it).
    const item = p.locator('.activitybar .action-item:has(.action-label[aria-label^="Postgres Agent"])').first();
    if (!(await item.evaluate((e) => e.classList.contains('checked') || e.querySelector('.checked') !== null)))
      await item.click();
    await p.locator('.pane-header[aria-label^="Schema"]').first().waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    const review = p.locator('.pane-header[aria-label^="Review"]').first();
    if ((await review.getAttribute('aria-expanded')) === 'true') await review.click();
    await suite.explained(() =>
      expect
        .poll(() => schemaTreeLabels(p), { timeout: 150_000, message: 'the schemas at the top of the tree' })
        .toEqual(expect.arrayContaining([schemaName(1), schemaName(2), schemaName(7)])),
    );
    expect(await schemaTreeRow(p, schemaName(7)).locator('.label-description').innerText()).toBe(`${TABLES} tables`);
    // Nothing but schemas at the top: no table of any schema is drawn before one is opened.
    expect((await schemaTreeLabels(p)).filter((l) => l.includes('_item_'))).toEqual([]);
    await screenshot(p, '1-schemas-with-counts', SUITE);

    await schemaTreeRow(p, schemaName(7)).click();
    await suite.explained(() =>
      expect.poll(() => schemaTreeLabels(p), { timeout: UI_TIMEOUT_MS }).toContain(tableName(7, 0)),
    );
    await screenshot(p, '2-schema-expanded-first-page', SUITE);
    const more = schemaTreeRows(p).filter({ hasText: 'Load more…' }).first();
    await pageDownTo(p, more);
    expect(await more.innerText()).toContain(`Load more… (${TABLES - 200} not shown)`);
    // The first page ends just above it.
    await expect.poll(() => schemaTreeLabels(p)).toContain(tableName(7, 199));
    expect(await schemaTreeLabels(p)).not.toContain(tableName(7, 200));
    await screenshot(p, '3-load-more-row', SUITE);

    await more.click();
    await suite.explained(() =>
      expect
        .poll(() => schemaTreeLabels(p), { timeout: UI_TIMEOUT_MS, message: 'the next page' })
        .toContain(tableName(7, 200)),
    );
    await schemaTreeRow(p, tableName(7, 200)).click();
    await pageDownTo(p, schemaTreeRow(p, tableName(7, TABLES - 1)));
    expect(await schemaTreeRows(p).filter({ hasText: 'Load more…' }).count(), 'no Load more once all are shown').toBe(
      0,
    );
    await screenshot(p, '4-after-load-more', SUITE);
  });

  it('the side panel lists the first 200 of the 6,000 tables; its Find Table… picks one among all of them and reveals it, selected, in its schema', async () => {
    const p = suite.page();
    await runCommand(p, 'Postgres Agent: Show Review Panel');
    const panel = await findWebviewFrame(p, MORE_TABLES, UI_TIMEOUT_MS);
    expect(await panel.locator(MORE_TABLES).innerText()).toContain(`… and ${fmt(SCHEMAS * TABLES - 200)} more.`);
    expect(await panel.locator(TABLE_ITEM).count()).toBe(200);
    expect(await panel.locator('vscode-collapsible[heading^="Tables ("]').getAttribute('heading')).toBe(
      `Tables (${fmt(SCHEMAS * TABLES)})`,
    );
    await screenshot(p, '5-panel-first-tables', SUITE);
    await panel.locator(`${MORE_TABLES} vscode-button`).click();
    const widget = p.locator('.quick-input-widget');
    await suite.explained(() =>
      expect
        .poll(() => widget.locator('input').first().getAttribute('placeholder'), { timeout: UI_TIMEOUT_MS })
        .toContain(`${SCHEMAS * TABLES} tables`),
    );
    const wanted = tableName(13, 250);
    await typeInQuickInput(p, wanted);
    const pick = widget.locator('.monaco-list-row', { hasText: wanted }).first();
    await pick.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    expect(await pick.innerText()).toContain(schemaName(13));
    await screenshot(p, '6-find-table-pick', SUITE);
    await p.keyboard.press('Enter');
    // Beyond the first page of tenant_13: revealing it loaded the page that holds it.
    const revealed = schemaTreeRow(p, wanted);
    await suite.explained(() => revealed.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    await expect.poll(() => revealed.getAttribute('aria-selected'), { timeout: UI_TIMEOUT_MS }).toBe('true');
    await screenshot(p, '7-find-table-revealed', SUITE);
  });
});

// The schema diagram and Edit in the results grid in a real VS Code (issue 33), as a person uses them: the diagram
// of the sample database (search, a click that shows the table's rows, four themes); one schema among 2,000 tables
// on a real server (drawn within the limit, said on screen); then an edited cell → Review changes → the held
// write's CodeLens → Approve & run → the row changed on the server and the grid showing it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { queryValue } from '../support/scratchDatabase';
import { bigSnapshot } from '../fixtures/bigSchema';
import { workbenchSuite } from './harness/suite';
import { readableInEveryTheme } from './harness/themes';
import {
  CODELENS_LINK,
  databaseOpen,
  findWebviewFrame,
  runCommand,
  screenshot,
  selectConnection,
  typeInQuickInput,
  webviewTexts,
} from './harness/workbench';

const SUITE = 'schema-diagram';
const UI_TIMEOUT_MS = 60_000;
const TABLE = '[data-testid="diagram-table"]';

/** The 2,000 tables of test/fixtures/bigSchema.ts in `public`, and a small `shop` schema to edit. */
function bigSchemaSql(): string {
  const tables = bigSnapshot().tables;
  const q = (name: string) => `"${name}"`;
  const creates = tables.map(
    (t) =>
      `CREATE TABLE public.${q(t.name)} (${t.columns.map((c) => `${q(c.name)} ${c.type}${c.name === 'id' ? ' PRIMARY KEY' : ''}`).join(', ')});`,
  );
  const fks = tables.flatMap((t) =>
    t.foreignKeys.map(
      (fk) =>
        `ALTER TABLE public.${q(t.name)} ADD FOREIGN KEY (${fk.columns.map(q).join(', ')}) REFERENCES public.${q(fk.references.table)} (id);`,
    ),
  );
  return [...creates, ...fks].join('\n');
}

const SHOP = `
CREATE SCHEMA shop;
CREATE TABLE shop.items (id integer PRIMARY KEY, label text NOT NULL, price numeric(10,2));
CREATE TABLE shop.item_notes (id serial PRIMARY KEY, item_id integer REFERENCES shop.items ON DELETE CASCADE, note text);
CREATE TABLE shop.item_audit (id serial PRIMARY KEY, item_id integer, what text);
CREATE FUNCTION shop.audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO shop.item_audit (item_id, what) VALUES (NEW.id, TG_OP); RETURN NEW; END $$;
CREATE TRIGGER items_audit AFTER UPDATE ON shop.items FOR EACH ROW EXECUTE FUNCTION shop.audit();
INSERT INTO shop.items VALUES (1, 'teapot', 20.00), (2, 'kettle', 35.50), (3, 'cup', 4.25);
`;

async function diagramFrame(p: Parameters<typeof findWebviewFrame>[0]): Promise<Frame> {
  return findWebviewFrame(p, '[data-testid="diagram-svg"]', UI_TIMEOUT_MS);
}

/** The page draws the tables at once, placed provisionally; the host's ELK layout (its worker thread) follows. */
async function finalLayout(frame: Frame): Promise<void> {
  await frame.locator('svg[data-layout="final"]').waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS });
}

describe('the schema diagram and Edit in the results grid', () => {
  let scratch: ScratchDatabase;

  beforeAll(async () => {
    scratch = await createScratchDatabase('i33a_e2e');
    await execSql(scratch.url, bigSchemaSql());
    await execSql(scratch.url, SHOP);
  }, 300_000);

  afterAll(async () => {
    await scratch?.drop();
  });

  const suite = workbenchSuite(SUITE, { connections: () => ({ bigdb: scratch }) });

  it('draws the sample database, finds a table, and a click shows its rows', { timeout: 400_000 }, async () => {
    const p = suite.page();
    await runCommand(p, 'Postgres Agent: Open Sample Database');
    await databaseOpen(p);
    await runCommand(p, 'Postgres Agent: Show Schema Diagram');
    const frame = await diagramFrame(p);
    await suite.explained(() =>
      expect.poll(async () => frame.locator(TABLE).count(), { timeout: UI_TIMEOUT_MS }).toBeGreaterThan(3),
    );
    await suite.explained(() => finalLayout(frame));
    expect(await frame.locator('[data-testid="diagram-edge"]').count()).toBeGreaterThan(0);
    expect(await frame.locator('[data-testid="diagram-note"]').innerText()).toMatch(/schema public: all \d+ tables/);
    expect(await frame.locator('[data-testid="diagram-arranging"]').innerText()).toBe('');
    await screenshot(p, 'sample-database-diagram', SUITE);

    await frame.locator('[data-testid="diagram-search"]').fill('order_items');
    await frame.locator('.table.found').first().waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    expect(await frame.locator('.table.found').getAttribute('data-table')).toBe('public.order_items');
    await screenshot(p, 'sample-diagram-search', SUITE);

    await frame.locator(`${TABLE}[data-table="public.customers"]`).click();
    const results = await findWebviewFrame(p, '[data-testid="results-grid"]', UI_TIMEOUT_MS);
    await expect
      .poll(async () => results.locator('[data-testid="result-row"]').count(), { timeout: UI_TIMEOUT_MS })
      .toBeGreaterThan(0);
    expect(await results.locator('[data-testid="results-summary"]').innerText()).toMatch(/^100 rows/);
    await screenshot(p, 'sample-diagram-click-shows-rows', SUITE);
  });

  it('reads in the four themes', { timeout: 400_000 }, async () => {
    const p = suite.page();
    await runCommand(p, 'Postgres Agent: Show Schema Diagram');
    await readableInEveryTheme(p, suite.workspace(), SUITE, [
      { frame: () => diagramFrame(p), readable: ['[data-testid="diagram-note"]'] },
    ]);
  });

  it('draws one schema among 2,000 tables within the limit, and says so', { timeout: 400_000 }, async () => {
    const p = suite.page();
    await selectConnection(p, 'bigdb');
    await runCommand(p, 'Postgres Agent: Show Schema Diagram');
    await suite.explained(() =>
      expect
        .poll(async () => (await webviewTexts(p, '[data-testid="diagram-note"]')).join(' '), {
          timeout: 120_000,
          message: 'the note of the 2,000-table schema',
        })
        .toContain('the 120 most connected of 2,000 tables'),
    );
    const frame = await diagramFrame(p);
    await expect.poll(async () => frame.locator(TABLE).count(), { timeout: UI_TIMEOUT_MS }).toBe(120);
    await finalLayout(frame);
    await screenshot(p, 'big-schema-public-120-of-2000', SUITE);

    await frame.locator('[data-testid="diagram-schema"]').selectOption('shop');
    await expect
      .poll(async () => (await frame.locator('[data-testid="diagram-note"]').innerText()).trim(), {
        timeout: UI_TIMEOUT_MS,
      })
      .toContain('schema shop: all 3 tables');
    await expect.poll(async () => frame.locator(TABLE).count(), { timeout: UI_TIMEOUT_MS }).toBe(3);
    await finalLayout(frame);
    await screenshot(p, 'big-database-shop-schema', SUITE);

    // Export: the save dialog proposes <schema>-diagram.svg|png in the workspace.
    for (const format of ['svg', 'png'] as const) {
      await frame.locator(`[data-testid="diagram-export-${format}"]`).click();
      await typeInQuickInput(p, '');
      await p.keyboard.press('Enter');
      const file = join(suite.workspace(), `shop-diagram.${format}`);
      await suite.explained(() =>
        expect.poll(() => existsSync(file), { timeout: UI_TIMEOUT_MS, message: `${format} written` }).toBe(true),
      );
    }
    const svg = readFileSync(join(suite.workspace(), 'shop-diagram.svg'), 'utf8');
    expect(svg).toMatch(/^<\?xml/);
    expect(svg).toContain('>item_notes</text>');
    expect(svg).not.toContain('class=');
    expect(readFileSync(join(suite.workspace(), 'shop-diagram.png')).subarray(1, 4).toString()).toBe('PNG');
  });

  it(
    'an edited cell becomes one held write; approved, the row changes and the grid shows it',
    { timeout: 400_000 },
    async () => {
      const p = suite.page();
      const frame = await diagramFrame(p);
      await frame.locator(`${TABLE}[data-table="shop.items"]`).click();
      const results = await findWebviewFrame(p, '[data-testid="results-grid"]', UI_TIMEOUT_MS);
      const cell = results.locator('[data-testid="result-row"] .cell', { hasText: /^kettle$/ }).first();
      await cell.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await results.locator('[data-testid="edit-start"]').click();
      await results.getByText(/Editing shop\.items/).waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await cell.click();
      await results.locator('[data-testid="results-grid"]').press('F2');
      const input = results.locator('[data-testid="cell-input"]');
      await input.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await input.fill("kettle 'deluxe'");
      await input.press('Enter');
      await screenshot(p, 'edit-cell-changed', SUITE);
      expect(await queryValue(scratch.url, 'SELECT label FROM shop.items WHERE id = 2')).toBe('kettle');

      await results.locator('[data-testid="edit-review"]').click();
      await suite.explained(() =>
        expect
          .poll(async () => (await p.locator(CODELENS_LINK).allInnerTexts()).join(' | '), {
            timeout: UI_TIMEOUT_MS,
            message: 'the approval CodeLens above the edits',
          })
          .toMatch(/Approve & run/),
      );
      await results.getByText(/Held for your approval/).waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await screenshot(p, 'edit-held-with-codelens-and-card', SUITE);
      // Nothing is written before a person approves it.
      expect(await queryValue(scratch.url, 'SELECT label FROM shop.items WHERE id = 2')).toBe('kettle');

      await p.locator(CODELENS_LINK, { hasText: 'Approve & run' }).first().click();
      await suite.explained(() =>
        expect
          .poll(() => queryValue(scratch.url, 'SELECT label FROM shop.items WHERE id = 2'), {
            timeout: UI_TIMEOUT_MS,
            message: 'the row changed on the server',
          })
          .toBe("kettle 'deluxe'"),
      );
      expect(await queryValue(scratch.url, "SELECT count(*)::int FROM shop.item_audit WHERE what = 'UPDATE'")).toBe(1);
      await results
        .locator('[data-testid="result-row"] .cell', { hasText: "kettle 'deluxe'" })
        .first()
        .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await results.getByText(/Written: 2 rows changed/).waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      await screenshot(p, 'edit-approved-grid-refreshed', SUITE);
    },
  );
});

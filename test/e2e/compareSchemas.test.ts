// Compare Schemas in a real VS Code (issue 33): two server databases, A and B, differ by a table, a column, an
// index and a foreign key. "Compare Schemas…" on A, picking B, holds the first step of the DDL that turns A into B
// at the inline approval with its lock analysis (the card's lock lines, the ticket's impact); Approve & run changes
// A's catalog; the next steps (VALIDATE, CREATE INDEX CONCURRENTLY) follow the same way until nothing differs.
// Screenshots of each step: test-artifacts/e2e/compareSchemas/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { clickLens, lensesAbove, ticketFiles, type TicketFile } from './harness/approvalCards';
import {
  editorText,
  pickCommand,
  screenshot,
  selectConnection,
  typeInQuickInput,
  webviewTexts,
} from './harness/workbench';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { queryValue } from '../support/scratchDatabase';

const SUITE = 'compareSchemas';
const UI_TIMEOUT_MS = 90_000;
const COMPARE = 'Postgres Agent: Compare Schemas…';

const BASE = `CREATE TABLE customers (id int PRIMARY KEY, email text);
INSERT INTO customers SELECT g, 'c' || g FROM generate_series(1, 50) g;`;
const A_SQL = `${BASE}
CREATE TABLE orders (id int PRIMARY KEY, customer_id int, total numeric);
INSERT INTO orders SELECT g, 1 + g % 50, g FROM generate_series(1, 500) g;
ANALYZE;`;
// B: a table (refunds), a column (orders.note), an index (orders.total) and a foreign key (orders.customer_id).
const B_SQL = `${BASE}
CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers, total numeric, note text);
CREATE INDEX orders_total_idx ON orders (total);
CREATE TABLE refunds (id int PRIMARY KEY, order_id int NOT NULL REFERENCES orders, amount numeric NOT NULL);`;

interface TicketWithLocks extends TicketFile {
  impact: { locks: { table: string; mode: string; blocks: string }[] };
}

const FK_VALID =
  "SELECT convalidated FROM pg_constraint WHERE conname = 'orders_customer_id_fkey' AND conrelid = 'public.orders'::regclass";

describe('Compare Schemas: a diff of two databases held as a ticket with its lock analysis', () => {
  let a: ScratchDatabase;
  let b: ScratchDatabase;

  beforeAll(async () => {
    a = await createScratchDatabase('i33h_a');
    b = await createScratchDatabase('i33h_b');
    await execSql(a.url, A_SQL);
    await execSql(b.url, B_SQL);
  });

  const suite = workbenchSuite(SUITE, { connections: () => ({ 'db-a': a, 'db-b': b }) });

  afterAll(async () => {
    await a?.drop();
    await b?.drop();
  }, 600_000);

  const tickets = () => ticketFiles<TicketWithLocks>(suite.workspace());
  const pendingWith = (text: string) =>
    tickets().filter((t) => t.status === 'PENDING_APPROVAL' && t.sql.includes(text));

  /** Compare Schemas… against db-b: the next step opens in an editor and is held. */
  async function compareWithB(p: Page): Promise<void> {
    await pickCommand(p, COMPARE);
    const row = p.locator('.quick-input-widget .monaco-list-row', { hasText: 'db-b' }).first();
    await row.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await typeInQuickInput(p, 'db-b');
    await p.keyboard.press('Enter');
  }

  /** Scrolls the review card's lock analysis into sight for the screenshot (the card is taller than the side bar). */
  async function showLockLines(p: Page): Promise<void> {
    for (const frame of p.frames()) {
      if (frame === p.mainFrame() || frame.isDetached()) continue;
      try {
        const line = frame.locator('[data-testid="lock-line"]').last();
        if ((await line.count()) > 0) await line.scrollIntoViewIfNeeded({ timeout: 5_000 });
      } catch {
        // Detached while we looked.
      }
    }
  }

  /** Waits for the held step whose SQL contains `text`, approves it with its CodeLens; returns its ticket. */
  async function approveStep(p: Page, text: string, shot: string): Promise<TicketWithLocks> {
    await suite.explained(() =>
      expect.poll(() => pendingWith(text).length, { timeout: UI_TIMEOUT_MS, message: `a ticket for ${text}` }).toBe(1),
    );
    const ticket = pendingWith(text)[0] as TicketWithLocks;
    await lensesAbove(suite, text, expect.arrayContaining(['Approve & run']), {
      timeout: UI_TIMEOUT_MS,
      message: 'the Approve & run CodeLens',
    });
    await showLockLines(p);
    await screenshot(p, shot, SUITE);
    await clickLens(p, 'Approve & run');
    // A HIGH-risk write asks once more in a modal.
    const confirm = p.locator('.monaco-dialog-box .monaco-button', { hasText: /Approve/ }).first();
    if (await confirm.isVisible().catch(() => false)) await confirm.click();
    await expect
      .poll(() => tickets().find((t) => t.id === ticket.id)?.status, { timeout: UI_TIMEOUT_MS, interval: 500 })
      .toBe('EXECUTED');
    return ticket;
  }

  it('holds the first step with its lock analysis; approved, it changes A', async () => {
    const p = suite.page();
    await selectConnection(p, 'db-a');

    await compareWithB(p);
    await suite.explained(() =>
      expect
        .poll(() => editorText(p), { timeout: UI_TIMEOUT_MS, message: 'the first step in an editor' })
        .toContain('CREATE TABLE "public"."refunds"'),
    );
    await expect.poll(() => pendingWith('CREATE TABLE "public"."refunds"').length, { timeout: UI_TIMEOUT_MS }).toBe(1);
    const held = pendingWith('CREATE TABLE "public"."refunds"')[0] as TicketWithLocks;
    // The DDL of the step: the table, the column and the foreign key added NOT VALID (validated in its own step).
    expect(held.sql).toContain('ADD COLUMN "note" text');
    expect(held.sql).toMatch(/ADD CONSTRAINT "orders_customer_id_fkey" FOREIGN KEY \(customer_id\) .*NOT VALID/);
    // Its lock analysis, in the ticket and on the card.
    expect(held.impact.locks.map((l) => `${l.table} ${l.mode}`)).toContain('public.customers SHARE ROW EXCLUSIVE');
    expect(held.impact.locks.some((l) => l.table === 'public.orders')).toBe(true);
    await suite.explained(() =>
      expect
        .poll(async () => (await webviewTexts(p, '[data-testid="lock-line"]')).join(' | '), {
          timeout: UI_TIMEOUT_MS,
          message: 'the lock lines on the card',
        })
        .toMatch(/public\.customers .*\(SHARE ROW EXCLUSIVE\)/),
    );
    expect(await queryValue(a.url, "SELECT to_regclass('public.refunds') IS NULL")).toBe(true);

    await approveStep(p, 'CREATE TABLE "public"."refunds"', 'step-1-held-with-lock-analysis');
    expect(await queryValue(a.url, "SELECT to_regclass('public.refunds') IS NOT NULL")).toBe(true);
    expect(
      await queryValue(
        a.url,
        "SELECT count(*)::int FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'note'",
      ),
    ).toBe(1);
    expect(await queryValue(a.url, FK_VALID)).toBe(false);
    await screenshot(p, 'step-1-approved', SUITE);
  });

  it('the next steps validate the foreign key and build the index concurrently; then nothing differs', async () => {
    const p = suite.page();
    await compareWithB(p);
    await approveStep(p, 'VALIDATE CONSTRAINT', 'step-2-validate-held');
    expect(await queryValue(a.url, FK_VALID)).toBe(true);

    await compareWithB(p);
    await approveStep(p, 'CREATE INDEX CONCURRENTLY', 'step-3-index-concurrently-held');
    expect(
      await queryValue(
        a.url,
        "SELECT count(*)::int FROM pg_index x WHERE x.indrelid = 'public.orders'::regclass AND x.indisvalid AND pg_get_indexdef(x.indexrelid) LIKE '%(total)%'",
      ),
    ).toBe(1);

    await compareWithB(p);
    await suite.explained(() =>
      p
        .locator('.notifications-toasts .notification-toast', { hasText: 'No difference' })
        .first()
        .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }),
    );
    await screenshot(p, 'no-difference-left', SUITE);
  });
});

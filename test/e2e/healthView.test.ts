// The Health view in a real VS Code (issue 26): Run Health Checks on a server database shows check → findings
// with evidence; "Fix as SQL" on the foreign key without an index opens its CREATE INDEX CONCURRENTLY in an
// editor, held with the usual CodeLens approval; Approve & run builds the index (asserted on the server).
// "Advise Indexes for This Query" on a SQL file offers the measured index (hypopg) and holds the one picked.
// Screenshots of each step: test-artifacts/e2e/healthView/.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { lensesAbove } from './harness/approvalCards';
import {
  CODELENS_LINK,
  editorText,
  openFile,
  pickCommand,
  runCommand,
  screenshot,
  selectConnection,
} from './harness/workbench';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { queryValue } from '../support/scratchDatabase';

const SUITE = 'healthView';
const UI_TIMEOUT_MS = 60_000;
const FIX_SQL = 'CREATE INDEX CONCURRENTLY ON public.orders (customer_id)';
const ADVISED_QUERY = 'SELECT id FROM orders WHERE total = 150';
const INDEXED =
  "SELECT count(*)::int FROM pg_index x WHERE x.indrelid = 'orders'::regclass AND x.indisvalid AND pg_get_indexdef(x.indexrelid) LIKE '%(customer_id)%'";

describe('The Health view: a finding fixed through the CodeLens approval', () => {
  let scratch: ScratchDatabase;

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_e2e_health');
    await execSql(
      scratch.url,
      `CREATE TABLE customers (id int PRIMARY KEY, email text);
       INSERT INTO customers SELECT g, 'c' || g FROM generate_series(1, 50) g;
       CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers, total numeric);
       INSERT INTO orders SELECT g, 1 + g % 50, g % 1000 FROM generate_series(1, 20000) g;
       ANALYZE;`,
    );
    // Installed on the machine by .ci/dba-cluster.sh (postgresql-15-hypopg serves every cluster of the version).
    await execSql(scratch.url, 'CREATE EXTENSION IF NOT EXISTS hypopg');
  });

  const suite = workbenchSuite(SUITE, {
    connections: () => ({ scratch }),
    prepare: (dir) => {
      writeFileSync(join(dir, 'query.sql'), `${ADVISED_QUERY}\n`);
    },
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  /** Waits for `sql` in an editor, then for the approval CodeLens above it (the write is held, not run). */
  async function heldInEditor(p: Page, sql: string, what: string): Promise<void> {
    await expect.poll(() => editorText(p), { timeout: UI_TIMEOUT_MS, message: `${what} in an editor` }).toContain(sql);
    await lensesAbove(suite, 'CREATE INDEX CONCURRENTLY', expect.arrayContaining(['Approve & run']), {
      timeout: UI_TIMEOUT_MS,
      message: 'the approval CodeLens',
    });
  }

  it('shows each check and the missing FK index with its evidence', async () => {
    const p = suite.page();
    await selectConnection(p, 'scratch');
    await runCommand(p, 'Postgres Agent: Run Health Checks');
    const check = p.locator('.monaco-list-row', { hasText: 'Foreign keys without an index' }).first();
    await suite.explained(() => check.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    const finding = p.locator('.monaco-list-row', { hasText: 'references public.customers without an index' }).first();
    await finding.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await screenshot(p, 'health-view-with-findings', SUITE);
    // The view's message sums the run up; checks with findings come first.
    await p
      .getByText(/1 warning, .* catalog reads in \d+ ms/)
      .first()
      .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    expect(
      (await p
        .locator('.monaco-list-row', { hasText: 'Foreign keys without an index' })
        .first()
        .getAttribute('aria-posinset')) ?? '1',
    ).toBe('1');
    expect(await queryValue(scratch.url, INDEXED)).toBe(0);
  });

  it('Fix as SQL holds the CREATE INDEX with the CodeLens approval; Approve & run builds it', async () => {
    const p = suite.page();
    await p.locator('.monaco-list-row', { hasText: 'references public.customers without an index' }).first().click();
    const fix = p.locator('.monaco-list-row', { hasText: 'Fix as SQL' }).first();
    await fix.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
    await fix.click();
    await heldInEditor(p, FIX_SQL, 'the fix');
    await screenshot(p, 'fix-held-with-codelens', SUITE);
    // Nothing is built before a person approves it.
    expect(await queryValue(scratch.url, INDEXED)).toBe(0);
    await p.locator(CODELENS_LINK, { hasText: 'Approve & run' }).first().click();
    await suite.explained(() =>
      expect
        .poll(() => queryValue(scratch.url, INDEXED), {
          timeout: UI_TIMEOUT_MS,
          interval: 500,
          message: 'the index built on the server',
        })
        .toBe(1),
    );
    await screenshot(p, 'fix-approved-index-built', SUITE);
  });

  it('Advise Indexes for This Query offers the measured index and holds the one picked', async () => {
    const p = suite.page();
    await openFile(p, 'query.sql');
    await pickCommand(p, 'Postgres Agent: Advise Indexes for This Query');
    const offer = p
      .locator('.quick-input-widget .monaco-list-row', { hasText: 'CREATE INDEX CONCURRENTLY ON public.orders (total' })
      .first();
    await suite.explained(() => offer.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    // Measured with hypothetical indexes: the planner cost before and after is in the pick.
    expect(await offer.innerText()).toMatch(/cost [\d.]+ → [\d.]+/);
    await screenshot(p, 'advise-indexes-measured-pick', SUITE);
    await offer.click();
    await heldInEditor(p, 'CREATE INDEX CONCURRENTLY ON public.orders (total', 'the advised index');
    await screenshot(p, 'advised-index-held-with-codelens', SUITE);
    // Held, not built: nothing on orders(total) until a person approves.
    expect(
      await queryValue(
        scratch.url,
        "SELECT count(*)::int FROM pg_indexes WHERE tablename = 'orders' AND indexdef LIKE '%(total%'",
      ),
    ).toBe(0);
  });
});

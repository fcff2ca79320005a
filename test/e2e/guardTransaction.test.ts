// A client transaction through `pg-agent guard` with VS Code open (code-server + Chromium): node-postgres sends
// BEGIN; INSERT … RETURNING id; UPDATE … WHERE id = $1 (the returned id); COMMIT. The guard holds it at COMMIT
// (rolled back, nothing kept) on ONE ticket; the window shows it as ONE card with both statements in order, their
// values, and the rows per table of the measured run (the audit trigger's rows too), with the same CodeLens as any
// held write. The person clicks "Approve for the agent", which only decides it (the one executor rule: the client's
// retry commits it); the client's identical retry (a new returned id) commits once, and the card follows the ticket
// to executed. Every count is read from the database. Screenshots: test-artifacts/e2e/guardTransaction/.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../support/guardProcess';
import { startGuardProcess } from '../support/guardProcess';
import { queryValue } from '../support/scratchDatabase';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { SHOP_SCHEMA } from '../support/shopSchema';
import { workbenchSuite } from './harness/suite';
import { CODELENS_LINK, RISK_LENS, screenshot, selectConnection } from './harness/workbench';
import { lensesAbove, lensTexts, waitForCardStatus } from './harness/approvalCards';

const SUITE = 'guardTransaction';
const UI_TIMEOUT_MS = 30_000;
const LENS_TIMEOUT_MS = 45_000;
const INSERT =
  "INSERT INTO orders (customer_id, total, created_at) VALUES (3, 42.50, '2026-01-02 00:00:00+00') RETURNING id";
const UPDATE = 'UPDATE orders SET status = $1 WHERE id = $2';
const EVENT = 'INSERT INTO order_events (id, order_id, at) VALUES ($1, $2, $3)';

/**
 * The ORM's transaction: the id the INSERT returns is used by the UPDATE and by an event row whose key is a fresh
 * UUID and whose time is the client's clock. Resolves to the COMMIT's error, if any.
 */
async function orderTransaction(
  client: pg.Client,
): Promise<{ id: number; uuid: string; at: string; error?: pg.DatabaseError }> {
  const uuid = randomUUID();
  const at = new Date().toISOString();
  await client.query('BEGIN');
  const id = (await client.query<{ id: number }>(INSERT)).rows[0]!.id;
  await client.query(UPDATE, ['paid', id]);
  await client.query(EVENT, [uuid, id, at]);
  const error = await client.query('COMMIT').then(
    () => undefined,
    (e: pg.DatabaseError) => e,
  );
  return { id, uuid, at, ...(error ? { error } : {}) };
}

describe('a transaction through pg-agent guard with VS Code open', () => {
  let scratch: ScratchDatabase;
  let guard: GuardProcess | undefined;
  let client: pg.Client | undefined;
  let attempt = 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_e2e_guard_tx');
    await execSql(scratch.url, SHOP_SCHEMA);
    await execSql(
      scratch.url,
      'CREATE TABLE order_events (id uuid PRIMARY KEY, order_id int NOT NULL REFERENCES orders(id), at timestamptz NOT NULL)',
    );
  });

  const suite = workbenchSuite(SUITE, { connections: () => ({ scratch }) });

  afterAll(async () => {
    await client?.end().catch(() => undefined);
    await guard?.stop();
    await scratch?.drop();
  });

  it("shows the held transaction as one card with both statements and rows per table; approving only decides; the client's retry commits it once", async () => {
    const p = suite.page();
    await selectConnection(p, 'scratch');

    // CI retries a failed E2E test once: a retry starts with a guard and a guard user of its own (the first try's
    // user is still in the workspace, and its toast may still be on screen).
    attempt += 1;
    await client?.end().catch(() => undefined);
    await guard?.stop();
    const user = attempt === 1 ? 'alice' : `alice${attempt}`;
    guard = await startGuardProcess(scratch.url, { workspace: suite.workspace(), user });
    client = new pg.Client({ connectionString: guard.url, application_name: 'orders-app' });
    client.on('error', () => undefined);
    await client.connect();
    const ordersBefore = Number(await queryValue(scratch.url, 'SELECT count(*) FROM orders'));
    const auditBefore = Number(await queryValue(scratch.url, 'SELECT count(*) FROM audit_log'));

    const first = await orderTransaction(client);
    expect(first.error?.code).toBe('PA001');
    const ticket = /ticket (tkt_[a-z0-9]+)/.exec(first.error?.message ?? '')?.[1] ?? '';
    expect(ticket).not.toBe('');
    // Rolled back at COMMIT: nothing the measured run did is kept.
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM orders'))).toBe(ordersBefore);
    const held = JSON.parse(
      readFileSync(join(suite.workspace(), '.pgagent', 'approvals', `${ticket}.json`), 'utf8'),
    ) as { sql: string; origin: string };
    expect(held.origin).toBe('guardTransaction');
    const event = `INSERT INTO order_events (id, order_id, at) VALUES ('${first.uuid}', '${first.id}', '${first.at}');`;
    expect(held.sql).toBe(`${INSERT};\nUPDATE orders SET status = 'paid' WHERE id = '${first.id}';\n${event}`);

    const toast = p.locator('.notifications-toasts .notification-toast', {
      hasText: `guard user ${user} proposes a transaction`,
    });
    await suite.explained(() => toast.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    expect(await toast.innerText()).toContain(`guard user ${user} proposes a transaction of 3 statements`);
    await screenshot(p, 'guard-transaction-notification', SUITE);
    await toast.locator('.monaco-button', { hasText: 'Review' }).click();

    const shown = await waitForCardStatus(suite, held.sql, 'pending', {
      timeout: UI_TIMEOUT_MS,
      message: 'one pending card for the held transaction',
    });
    expect(shown.sql.split('\n')).toEqual([
      `${INSERT};`,
      `UPDATE orders SET status = 'paid' WHERE id = '${first.id}';`,
      event,
    ]);
    expect(shown.transaction).toContain('3 statements in order');
    // Named before the approval: what its retry may carry differently, and why (the rest must be identical).
    const varies = shown.warnings.filter((w) => w.startsWith('Varies on retry:'));
    expect(varies).toEqual([
      `Varies on retry: statement 2, value 2 (${first.id}): the value statement 1 returned (id, row 1) in the retry.`,
      `Varies on retry: statement 3, value 1 (${first.uuid}): a fresh random UUID (version 4).`,
      `Varies on retry: statement 3, value 2 (${first.id}): the value statement 1 returned (id, row 1) in the retry.`,
      `Varies on retry: statement 3, value 3 (${first.at}): the current time, within 10 minutes of the retry's clock.`,
    ]);
    // Rows per table of the measured run: the order inserted and updated, and the audit trigger's two rows.
    expect(shown.impact).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^orders\s*1 updated, 1 inserted/),
        expect.stringMatching(/^audit_log\s*2 inserted/),
        expect.stringMatching(/^order_events\s*1 inserted/),
      ]),
    );
    await lensesAbove(
      suite,
      'INSERT INTO orders',
      expect.arrayContaining([
        expect.stringMatching(RISK_LENS),
        expect.stringMatching(/ · 5 rows in 3 tables$/),
        'Approve for the agent',
        'Reject',
      ]),
      { timeout: LENS_TIMEOUT_MS, message: 'the CodeLens above the held transaction' },
    );
    await screenshot(p, 'guard-transaction-one-card-with-codelens', SUITE);
    await p
      .frameLocator('iframe.webview.ready')
      .frameLocator('#active-frame')
      .locator('p.warning-text', { hasText: 'Varies on retry' })
      .first()
      .scrollIntoViewIfNeeded()
      .catch(() => undefined);
    await screenshot(p, 'guard-transaction-varies-on-retry', SUITE);

    await p.locator(CODELENS_LINK, { hasText: 'Approve for the agent' }).first().click();
    await waitForCardStatus(suite, held.sql, 'approved', {
      timeout: UI_TIMEOUT_MS,
      message: 'the card approved, waiting for the client',
    });
    const approvedToast = p.locator('.notifications-toasts .notification-toast', {
      hasText: "the client's retry commits it",
    });
    await suite.explained(() => approvedToast.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    await suite.explained(() =>
      expect
        .poll(() => lensTexts(p), {
          timeout: LENS_TIMEOUT_MS,
          interval: 250,
          message: 'the lens says the client commits it',
        })
        .toContain("Approved — waiting for the client's retry to commit it"),
    );
    await screenshot(p, 'guard-transaction-approved-waiting-for-the-client', SUITE);
    // Approving ran nothing: the client's retry commits it.
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM orders'))).toBe(ordersBefore);
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM audit_log'))).toBe(auditBefore);

    const retry = await orderTransaction(client);
    expect(retry.error).toBeUndefined();
    expect(retry.id).not.toBe(first.id);
    expect(retry.uuid).not.toBe(first.uuid);
    expect(Number(await queryValue(scratch.url, `SELECT order_id FROM order_events WHERE id = '${retry.uuid}'`))).toBe(
      retry.id,
    );
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM order_events'))).toBe(1);
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM orders'))).toBe(ordersBefore + 1);
    expect(await queryValue(scratch.url, `SELECT status || ':' || total FROM orders WHERE id = ${retry.id}`)).toBe(
      'paid:42.50',
    );
    expect(Number(await queryValue(scratch.url, 'SELECT count(*) FROM audit_log'))).toBe(auditBefore + 2);
    await waitForCardStatus(suite, held.sql, 'executed', {
      timeout: UI_TIMEOUT_MS,
      message: 'the card followed the ticket to executed',
    });
    await screenshot(p, 'guard-transaction-committed-by-the-client', SUITE);
  });
});

// A guarded endpoint with VS Code open (code-server + Chromium): psql (Debian's) sends a DELETE through
// `pg-agent guard` running on the window's workspace; the window shows the held statement with its CodeLens
// and impact card like any held write; the person clicks "Approve for the agent", which only decides it (the one
// executor rule: whoever proposed a write runs it — here the guard, on psql's retry of the identical statement);
// the retry runs it (exit 0), the row is gone exactly once, and the card follows the ticket to executed.
// Screenshots: test-artifacts/e2e/guard/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../support/guardProcess';
import { startGuardProcess } from '../support/guardProcess';
import { psqlRun } from '../support/psqlRun';
import { queryValue } from '../support/scratchDatabase';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { SHOP_SCHEMA } from '../support/shopSchema';
import { workbenchSuite } from './harness/suite';
import { CODELENS_LINK, RISK_LENS, screenshot, selectConnection } from './harness/workbench';
import { lensesAbove, waitForCardStatus } from './harness/approvalCards';

const SUITE = 'guard';
const HELD_SQL = 'DELETE FROM orders WHERE id = 1';
const UI_TIMEOUT_MS = 30_000;
const LENS_TIMEOUT_MS = 45_000;

const psql = (url: string, sql: string) => psqlRun(url, [sql], 'psql');

describe('pg-agent guard with VS Code open', () => {
  let scratch: ScratchDatabase;
  let guard: GuardProcess | undefined;

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_e2e_guard');
    await execSql(scratch.url, SHOP_SCHEMA);
  });

  const suite = workbenchSuite(SUITE, { connections: () => ({ scratch }) });

  afterAll(async () => {
    await guard?.stop();
    await scratch?.drop();
  });

  it("shows a DELETE psql sent through the guard; approving only decides it; psql's retry runs it once", async () => {
    const p = suite.page();
    await selectConnection(p, 'scratch');

    guard = await startGuardProcess(scratch.url, { workspace: suite.workspace() });
    const held = await psql(guard.url, HELD_SQL);
    expect(held.code).not.toBe(0);
    expect(held.stderr).toContain('held for approval: ticket');

    const toast = p.locator('.notifications-toasts .notification-toast', { hasText: 'proposes a write' });
    await suite.explained(() => toast.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    expect(await toast.innerText()).toContain('guard user alice proposes a write');
    await screenshot(p, 'guard-proposal-notification', SUITE);
    await toast.locator('.monaco-button', { hasText: 'Review' }).click();

    await waitForCardStatus(suite, HELD_SQL, 'pending', {
      timeout: UI_TIMEOUT_MS,
      message: 'a pending card for the held statement',
    });
    await lensesAbove(
      suite,
      HELD_SQL,
      expect.arrayContaining([expect.stringMatching(RISK_LENS), 'Approve for the agent', 'Reject']),
      { timeout: LENS_TIMEOUT_MS, message: 'the CodeLens above the held SQL' },
    );
    await screenshot(p, 'guard-held-with-codelens-and-card', SUITE);
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 1')).toBe(1);

    await p.locator(CODELENS_LINK, { hasText: 'Approve for the agent' }).first().click();
    await waitForCardStatus(suite, HELD_SQL, 'approved', {
      timeout: UI_TIMEOUT_MS,
      message: 'the card approved, waiting for the client',
    });
    await screenshot(p, 'guard-approved-waiting-for-the-client', SUITE);
    // Approving ran nothing: the guard's client runs it.
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 1')).toBe(1);

    const retry = await psql(guard.url, HELD_SQL);
    expect(retry).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 1')).toBe(0);
    await waitForCardStatus(suite, HELD_SQL, 'executed', {
      timeout: UI_TIMEOUT_MS,
      message: 'the card followed the ticket to executed',
    });
    await screenshot(p, 'guard-run-by-the-client', SUITE);
  });
});

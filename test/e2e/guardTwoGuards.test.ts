// Two guards, one Redis ticket store, VS Code open on the same store (code-server + Chromium): psql sends a
// DELETE through guard A, where it is held; the side panel's "Waiting for you" lists it once (one ticket, not
// one per guard); the person approves it in VS Code by clicking "Approve for the agent" (which only decides it);
// psql's retry reaches guard B, which runs it once: the row is gone, the ticket EXECUTED, and a second retry is
// a new ticket. The UI lists no guard processes (guard status does, in a terminal). Screenshots:
// test-artifacts/e2e/guard-two-guards/.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../support/guardProcess';
import { startGuardProcess } from '../support/guardProcess';
import { psqlRun, ticketIn } from '../support/psqlRun';
import { queryValue } from '../support/scratchDatabase';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql, REDIS_URL } from '../support/services';
import { SHOP_SCHEMA } from '../support/shopSchema';
import { frameTexts, navigator } from './harness/cockpit';
import { workbenchSuite } from './harness/suite';
import { CODELENS_LINK, RISK_LENS, runCommand, screenshot, selectConnection } from './harness/workbench';
import { lensesAbove, waitForCardStatus } from './harness/approvalCards';

const SUITE = 'guard-two-guards';
const HELD_SQL = 'DELETE FROM orders WHERE id = 2';
const UI_TIMEOUT_MS = 30_000;
const LENS_TIMEOUT_MS = 45_000;
/** VS Code's Redis ticket store has no prefix setting: the guards use its default one, and the test removes its tickets. */
const PREFIX = 'pgagent:';

const psql = (url: string, sql: string) => psqlRun(url, [sql], 'psql');

/** The texts of the side panel's "Waiting for you" items of this ticket (none while the panel is not there). */
async function waitingItems(page: Page, ticket: string): Promise<string[]> {
  try {
    const nav = await navigator(page, 2_000);
    return await frameTexts(nav, `[data-testid="waiting-item"][data-ticket-id="${ticket}"]`);
  } catch {
    return [];
  }
}

describe('two pg-agent guards on one Redis store, with VS Code open on it', () => {
  let scratch: ScratchDatabase;
  let a: GuardProcess | undefined;
  let b: GuardProcess | undefined;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const ours: string[] = [];
  const ticketJson = async (id: string) =>
    JSON.parse((await redis.get(`${PREFIX}ticket:${id}`)) ?? 'null') as { status: string; sql: string } | null;

  beforeAll(async () => {
    scratch = await createScratchDatabase('i38o_e2e_two_guards');
    await execSql(scratch.url, SHOP_SCHEMA);
    await redis.connect();
  });

  const suite = workbenchSuite(SUITE, {
    settings: { 'postgresAgent.redisUrl': REDIS_URL },
    connections: () => ({ scratch }),
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    for (const id of ours) {
      await redis.del(`${PREFIX}ticket:${id}`);
      const type = await redis.type(`${PREFIX}tickets`);
      if (type === 'zset') await redis.zrem(`${PREFIX}tickets`, id);
      if (type === 'set') await redis.srem(`${PREFIX}tickets`, id);
    }
    // The live index sets naming them, and the schema cache VS Code kept for the scratch database.
    for (const key of await redis.keys(`${PREFIX}live:*`)) {
      if ((await redis.type(key)) !== 'set') continue;
      if (ours.length > 0) await redis.srem(key, ...ours);
      if ((await redis.scard(key)) === 0) await redis.del(key);
    }
    for (const key of await redis.keys(`${PREFIX}schema:*${scratch.name}*`)) await redis.del(key);
    redis.disconnect();
    await scratch?.drop();
  });

  it('shows a statement held by guard A once in "Waiting for you"; approved by a click, its retry through guard B runs it once', async () => {
    const p = suite.page();
    await selectConnection(p, 'scratch');

    const env = { REDIS_URL };
    // Names of this attempt's own: a retried attempt finds the first one's users in the workspace.
    const attempt = randomBytes(3).toString('hex');
    a = await startGuardProcess(scratch.url, { workspace: suite.workspace(), user: `alice_${attempt}`, env });
    b = await startGuardProcess(scratch.url, { workspace: suite.workspace(), user: `bob_${attempt}`, env });
    // alice's URL at guard B: one workspace, one users file.
    const atB = new URL(a.url);
    atB.port = String(b.port);

    const held = await psql(a.url, HELD_SQL);
    expect(held.code).not.toBe(0);
    expect(held.stderr).toContain('held for approval: ticket');
    const ticket = ticketIn(held.stderr);
    expect(ticket).toMatch(/^tkt_/);
    ours.push(ticket);
    expect((await ticketJson(ticket))?.status).toBe('PENDING_APPROVAL');
    // Before any decision, the same statement through guard B finds the same ticket.
    const heldAtB = await psql(atB.toString(), HELD_SQL);
    expect(heldAtB.stderr).toContain(ticket);

    const toast = p.locator('.notifications-toasts .notification-toast', { hasText: 'proposes a write' }).first();
    await suite.explained(() => toast.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    await toast.locator('.monaco-button', { hasText: 'Review' }).click();
    await waitForCardStatus(suite, HELD_SQL, 'pending', {
      timeout: UI_TIMEOUT_MS,
      message: 'a pending card for the held statement',
    });
    // "Waiting for you" in the side panel lists it once: one ticket for both guards (the store is read every 15 s).
    await p.locator('.part.titlebar').click({ position: { x: 120, y: 10 } });
    await runCommand(p, 'Postgres Agent: Show Review Panel');
    await suite.explained(() =>
      expect
        .poll(() => waitingItems(p, ticket), {
          timeout: 60_000,
          interval: 1_000,
          message: 'one "Waiting for you" item for the held statement',
        })
        .toHaveLength(1),
    );
    expect((await waitingItems(p, ticket))[0]).toContain(HELD_SQL);
    await screenshot(p, 'two-guards-waiting-for-you-once', SUITE);
    await lensesAbove(
      suite,
      HELD_SQL,
      expect.arrayContaining([expect.stringMatching(RISK_LENS), 'Approve for the agent', 'Reject']),
      { timeout: LENS_TIMEOUT_MS, message: 'the CodeLens above the held SQL' },
    );
    await screenshot(p, 'two-guards-held-with-codelens-and-card', SUITE);
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 2')).toBe(1);

    await p.locator(CODELENS_LINK, { hasText: 'Approve for the agent' }).first().click();
    await waitForCardStatus(suite, HELD_SQL, 'approved', { timeout: UI_TIMEOUT_MS, message: 'the card approved' });
    expect((await ticketJson(ticket))?.status).toBe('APPROVED');
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 2')).toBe(1);
    await screenshot(p, 'two-guards-approved-waiting-for-the-client', SUITE);

    // The retry reaches guard B: it runs once there.
    const retry = await psql(atB.toString(), HELD_SQL);
    expect(retry).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 2')).toBe(0);
    expect((await ticketJson(ticket))?.status).toBe('EXECUTED');
    await waitForCardStatus(suite, HELD_SQL, 'executed', {
      timeout: UI_TIMEOUT_MS,
      message: 'the card followed the ticket to executed',
    });
    await screenshot(p, 'two-guards-run-once-through-guard-b', SUITE);
    // Once: the same text again through guard A, which held it, is told it already ran for the retry through
    // guard B (never that it ran now), or is a new ticket; nothing runs again, the ticket stays EXECUTED.
    const again = await psql(a.url, HELD_SQL);
    const next = /held for approval: ticket (tkt_[a-z0-9]+)/.exec(again.stderr)?.[1];
    if (next) {
      ours.push(next);
      expect(next).not.toBe(ticket);
    } else {
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain(`Ticket ${ticket} for this statement already ran, for another client's retry`);
    }
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 2')).toBe(0);
    const executed = await ticketJson(ticket);
    expect(executed?.status).toBe('EXECUTED');
    expect(JSON.stringify(executed)).toContain('guard user alice');
  });
});

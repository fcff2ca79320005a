// What a person sees in a real VS Code (code-server + Chromium) on a fresh workspace: the activity-bar
// item, the review panel opened from the palette, and the embedded sample database's tables in it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCodeServer } from './harness/codeServer';
import type { CodeServer } from './harness/codeServer';
import {
  artifactsDir,
  launchBrowser,
  openWorkbench,
  resetArtifacts,
  runCommand,
  screenshot,
  seenNotifications,
  webviewTexts,
} from './harness/workbench';

const SUITE = 'panel';
const ACTIVITY_ITEM = '.activitybar .action-label[aria-label^="Postgres Agent"]';
const WEBVIEW = 'iframe.webview.ready';
const TABLE_ITEM = '[data-testid="table-item"]';
const CONNECTION_LABEL = '[data-testid="connection-label"]';
const SAMPLE_TABLES = ['customers', 'orders', 'order_items'];
// The sample database is generated on first use, which takes a few seconds.
const SAMPLE_DB_TIMEOUT_MS = 60_000;
const UI_TIMEOUT_MS = 30_000;

/** Sample tables not (yet) shown as a table item; names match whole words so `orders` ≠ `order_items`. */
function missingTables(texts: string[]): string[] {
  return SAMPLE_TABLES.filter((name) => !texts.some((text) => new RegExp(`\\b${name}\\b`).test(text)));
}

describe('Postgres Agent in VS Code', () => {
  let workspace: string | undefined;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;

  /** The workbench page; fails the test clearly if setup did not get that far. */
  function workbench(): Page {
    if (page === undefined) throw new Error('The workbench did not open (see beforeAll)');
    return page;
  }

  /** Adds the notifications VS Code showed to a failure, since they usually say why. */
  async function explained(check: () => Promise<void>): Promise<void> {
    try {
      await check();
    } catch (error) {
      const notifications = page === undefined ? [] : await seenNotifications(page).catch(() => []);
      if (error instanceof Error && notifications.length > 0) {
        const lines = notifications.map(({ severity, text }) => `  [${severity}] ${text}`).join('\n');
        error.message += `\nNotifications shown so far:\n${lines}`;
      }
      throw error;
    }
  }

  beforeAll(async () => {
    resetArtifacts(SUITE);
    workspace = mkdtempSync(join(tmpdir(), 'pgagent-e2e-workspace-'));
    server = await startCodeServer({ workspace, keepLogsIn: join(artifactsDir(SUITE), 'logs') });
    browser = await launchBrowser();
    page = await openWorkbench(browser, server.url, workspace);
  });

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async ({ task }) => {
      if (page !== undefined) await screenshot(page, `FAILED-${task.name}`, SUITE).catch(() => undefined);
    });
  });

  afterAll(async () => {
    try {
      await browser?.close();
    } finally {
      try {
        await server?.stop();
      } finally {
        if (workspace !== undefined) rmSync(workspace, { recursive: true, force: true });
      }
    }
  });

  it('shows the Postgres Agent item in the activity bar', async () => {
    const p = workbench();
    await explained(() =>
      expect
        .poll(() => p.locator(ACTIVITY_ITEM).first().isVisible(), { timeout: UI_TIMEOUT_MS, message: ACTIVITY_ITEM })
        .toBe(true),
    );
    await screenshot(p, 'activity-bar-item', SUITE);
  });

  it('opens the review panel from the command palette', async () => {
    const p = workbench();
    // A fresh workspace starts on the Explorer: no webview is open until the command opens the panel.
    expect(await p.locator(WEBVIEW).count(), 'webviews open before the command').toBe(0);
    await runCommand(p, 'Postgres Agent: Show Review Panel');
    const body = p.frameLocator(WEBVIEW).first().frameLocator('#active-frame').locator('body');
    await explained(() => body.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    await explained(() =>
      expect.poll(async () => (await body.innerText()).trim().length, { timeout: UI_TIMEOUT_MS }).toBeGreaterThan(0),
    );
    await screenshot(p, 'review-panel', SUITE);
  });

  it("lists the sample database's tables and names the connection", async () => {
    const p = workbench();
    await explained(() =>
      expect
        .poll(async () => missingTables(await webviewTexts(p, TABLE_ITEM)), {
          timeout: SAMPLE_DB_TIMEOUT_MS,
          interval: 500,
          message: `the panel should list ${SAMPLE_TABLES.join(', ')} as ${TABLE_ITEM} (listed are the missing ones)`,
        })
        .toEqual([]),
    );
    await explained(() =>
      expect
        .poll(() => webviewTexts(p, CONNECTION_LABEL), { timeout: UI_TIMEOUT_MS, message: 'connection label' })
        .toContainEqual(expect.stringContaining('sample')),
    );
    await screenshot(p, 'sample-tables', SUITE);
  });

  it('opens the sample database from the command palette', async () => {
    const p = workbench();
    const panel = p.locator(WEBVIEW).first();
    // Move away from the panel first, so the command has to bring it back.
    await runCommand(p, 'View: Show Explorer');
    await expect.poll(() => panel.isVisible(), { timeout: UI_TIMEOUT_MS, message: 'panel hidden' }).toBe(false);
    const before = (await seenNotifications(p)).length;
    await runCommand(p, 'Postgres Agent: Open Sample Database');
    await explained(() =>
      expect.poll(() => panel.isVisible(), { timeout: UI_TIMEOUT_MS, message: 'panel shown again' }).toBe(true),
    );
    await explained(() =>
      expect
        .poll(() => webviewTexts(p, CONNECTION_LABEL), { timeout: SAMPLE_DB_TIMEOUT_MS, message: 'connection label' })
        .toContainEqual(expect.stringContaining('sample')),
    );
    await explained(() =>
      expect
        .poll(async () => missingTables(await webviewTexts(p, TABLE_ITEM)), {
          timeout: SAMPLE_DB_TIMEOUT_MS,
          interval: 500,
          message: 'sample tables still listed after Open Sample Database (listed are the missing ones)',
        })
        .toEqual([]),
    );
    await screenshot(p, 'open-sample-database', SUITE);
    const errors = (await seenNotifications(p)).slice(before).filter(({ severity }) => severity === 'error');
    expect(errors, 'error notifications after Open Sample Database').toEqual([]);
  });
});

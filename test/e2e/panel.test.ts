// What a person sees in a real VS Code (code-server + Chromium) on a fresh workspace: the activity-bar
// item, the review panel opened from the palette, and the embedded sample database's tables in it.
import { describe, expect, it } from 'vitest';
import { workbenchSuite } from './harness/suite';
import { ACTIVITY_ITEM, runCommand, screenshot, seenNotifications, webviewTexts } from './harness/workbench';

const SUITE = 'panel';
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
  // The activity-bar item's appearance is the first test: no waiting for it in setup.
  const suite = workbenchSuite(SUITE, { waitForExtension: false });
  const workbench = () => suite.page();
  const explained = (check: () => Promise<void>) => suite.explained(check);

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

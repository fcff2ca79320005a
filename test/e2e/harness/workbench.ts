// Playwright helpers that drive the VS Code workbench served by code-server the way a person would:
// command palette, webview frames, notifications, and numbered screenshots kept as test artifacts.
import { mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Frame, Page } from 'playwright-core';
import { expect } from 'vitest';
import { repoRoot } from './codeServer';

/** The extension's item in the activity bar: there once its contributions are. */
export const ACTIVITY_ITEM = '.activitybar .action-label[aria-label^="Postgres Agent"]';
/** A CodeLens above a line of the visible editor. */
export const CODELENS_LINK = '.part.editor .monaco-editor .codelens-decoration a';
/** The risk lens above a held write: "HIGH · 3 rows in 1 table". */
export const RISK_LENS = /\b(LOW|MEDIUM|HIGH|CRITICAL) · ([\d,]+) rows? in (\d+) tables?\b/;

const CHROMIUM = '/usr/bin/chromium';
const WORKBENCH_TIMEOUT_MS = 90_000;
const UI_TIMEOUT_MS = 15_000;
const PALETTE_ATTEMPT_MS = 3_000;

/** Headless Debian Chromium with the flags this closed network needs (see E2E-RECIPE.md). */
export async function launchBrowser(executablePath: string = CHROMIUM): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      // Without these, Chromium's own background connections get refused in bursts here.
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Opens the workbench on `workspace` and waits until VS Code has rendered it. */
export async function openWorkbench(browser: Browser, url: string, workspace: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(recordNotifications);
  const page = await context.newPage();
  await page.goto(`${url}/?${new URLSearchParams({ folder: workspace }).toString()}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: WORKBENCH_TIMEOUT_MS });
  return page;
}

/**
 * Runs a command from the palette by its full title, e.g. "Postgres Agent: Show Review Panel". The palette
 * lists the commands known when it opens; right after start-up an extension's contributions may not be
 * registered yet, so the palette is reopened until the command shows up or `timeoutMs` passes.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 30_000): Promise<void> {
  await pickCommand(page, title, timeoutMs);
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

/**
 * Whether the quick input has the keyboard, giving it a moment: the widget shows a moment before its box
 * takes the focus, and keys typed then land in the editor (seen as "ount3.sql" in a file). A webview that
 * had the keyboard sometimes keeps it while the widget shows: a click on the widget's own box then gives
 * the keyboard to it. The box may itself be hidden while the widget redraws (seen right after another
 * input box closed), so the click may not happen; the caller then starts over.
 */
async function quickInputHasKeyboard(page: Page): Promise<boolean> {
  const widget = page.locator('.quick-input-widget');
  const focused = () => page.evaluate(() => document.activeElement?.closest('.quick-input-widget') !== null);
  const settle = async (ms: number): Promise<boolean> => {
    const deadline = Date.now() + ms;
    while (!(await focused()) && Date.now() < deadline) await page.waitForTimeout(100);
    return focused();
  };
  if (await settle(2_000)) return true;
  await widget
    .locator('input')
    .first()
    .click({ timeout: 3_000 })
    .catch(() => undefined);
  if (await settle(2_000)) return true;
  // Seen in CI: three Quick Opens in a row whose box could not be clicked (the keyboard stayed in a webview):
  // give the box the focus the way the workbench itself does, without a pointer.
  await widget
    .locator('input')
    .first()
    .focus({ timeout: 3_000 })
    .catch(() => undefined);
  return settle(1_000);
}

/** Types into the quick input (palette, Quick Open) once it has the keyboard. */
export async function typeInQuickInput(page: Page, text: string): Promise<void> {
  await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  if (!(await quickInputHasKeyboard(page))) throw new Error('The quick input did not get the keyboard');
  await page.keyboard.type(text);
}

/** Closes the quick input if it shows (a leftover box, or a palette that did not get the keyboard). */
async function closeQuickInput(page: Page): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  if (!(await widget.isVisible())) return;
  await page.keyboard.press('Escape');
  await widget.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

/** Like runCommand, but leaves the palette's widget to the command's own input box or pick. */
export async function pickCommand(page: Page, title: string, timeoutMs = 30_000): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  const row = widget.locator('.monaco-list-row', { hasText: title }).first();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await closeQuickInput(page);
    await page.keyboard.press('F1');
    let failure: unknown;
    try {
      await widget.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
      if (!(await quickInputHasKeyboard(page))) throw new Error('The palette did not get the keyboard');
      // F1 leaves ">" in the box; typing appends to it.
      await page.keyboard.type(title);
      await row.waitFor({ state: 'visible', timeout: PALETTE_ATTEMPT_MS });
      break;
    } catch (error) {
      failure = error;
    }
    const shown = await widget.locator('.monaco-list-row').allInnerTexts();
    await closeQuickInput(page);
    if (Date.now() > deadline) {
      const rows = shown.map((text) => text.replace(/\s+/g, ' ').trim()).join(' | ') || 'none';
      throw new Error(`The command palette has no "${title}" after ${timeoutMs / 1000} s (rows shown: ${rows})`, {
        cause: failure,
      });
    }
  }
  const focused = widget.locator('.monaco-list-row.focused', { hasText: title });
  if ((await focused.count()) > 0) {
    await page.keyboard.press('Enter');
  } else {
    // Another command whose title contains this one is ranked first: pick ours explicitly.
    await row.click();
  }
}

/** Palette → "Select Connection…" → the profile `name`: the window connects to it. */
export async function selectConnection(page: Page, name: string): Promise<void> {
  // The command opens its own pick: the palette's widget stays up for it (runCommand would wait for it to hide).
  await pickCommand(page, 'Postgres Agent: Select Connection…');
  await typeInQuickInput(page, name);
  await page.keyboard.press('Enter');
}

/**
 * The frame of the webview that contains `selector`. Webview content sits two iframes deep (outer
 * `iframe.webview.ready`, inner `#active-frame`), so every frame of the page is searched until one has it.
 */
export async function findWebviewFrame(page: Page, selector: string, timeoutMs = 60_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      try {
        if ((await frame.$(selector)) !== null) return frame;
      } catch {
        // The frame navigated or was detached while we looked; the next round sees its replacement.
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`No webview frame contains ${selector} after ${timeoutMs / 1000} s`);
    }
    await page.waitForTimeout(250);
  }
}

/**
 * Inner texts of every element matching `selector` in any webview frame, for polling on what a webview
 * shows while it (re)renders. Frames that go away mid-read are skipped.
 */
export async function webviewTexts(page: Page, selector: string): Promise<string[]> {
  const texts: string[] = [];
  for (const frame of page.frames()) {
    if (frame === page.mainFrame()) continue;
    try {
      texts.push(...(await frame.locator(selector).allInnerTexts()));
    } catch {
      // Detached while we read it.
    }
  }
  return texts.map((text) => text.trim());
}

/** Texts of the notification toasts currently shown (bottom right). */
export async function notificationTexts(page: Page): Promise<string[]> {
  const texts = await page
    .locator('.notifications-toasts .notification-toast .notification-list-item-message')
    .allInnerTexts();
  return texts.map((text) => text.trim());
}

export interface SeenNotification {
  severity: 'error' | 'warning' | 'info';
  text: string;
}

/**
 * Every notification toast shown since the workbench opened, oldest first, including those that have
 * hidden themselves since (toasts disappear after a while, so a check made later would miss them).
 */
export async function seenNotifications(page: Page): Promise<SeenNotification[]> {
  return page.evaluate(() => {
    const seen: unknown = Reflect.get(window, '__e2eNotifications');
    return Array.isArray(seen) ? (seen as SeenNotification[]) : [];
  });
}

/** Runs in the page before VS Code loads: records each toast's severity and text as it appears. */
function recordNotifications(): void {
  const seen: SeenNotification[] = [];
  const keys = new Set<string>();
  Reflect.set(window, '__e2eNotifications', seen);
  let scheduled = false;
  const scan = (): void => {
    scheduled = false;
    for (const toast of document.querySelectorAll('.notifications-toasts .notification-toast')) {
      const message = toast.querySelector('.notification-list-item-message');
      const icon = toast.querySelector('.notification-list-item-icon');
      const text = message instanceof HTMLElement ? message.innerText.trim() : '';
      if (text === '') continue;
      const severity = icon?.classList.contains('codicon-error')
        ? 'error'
        : icon?.classList.contains('codicon-warning')
          ? 'warning'
          : 'info';
      // A toast is keyed by its element too, so the same message shown twice is recorded twice.
      const id = toast.getAttribute('data-e2e-id') ?? String(keys.size);
      toast.setAttribute('data-e2e-id', id);
      const key = `${id}|${severity}|${text}`;
      if (!keys.has(key)) {
        keys.add(key);
        seen.push({ severity, text });
      }
    }
  };
  // The workbench mutates the DOM constantly: coalesce into at most one scan per 100 ms.
  new MutationObserver(() => {
    if (!scheduled) {
      scheduled = true;
      setTimeout(scan, 100);
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
}

const shotCounters = new Map<string, number>();

/** Folder of a suite's screenshots: test-artifacts/e2e/<suite>/ at the repository root (git-ignored). */
export function artifactsDir(suite: string = currentSuite()): string {
  return join(repoRoot, 'test-artifacts', 'e2e', suite);
}

/** Empties a suite's artifacts folder and restarts its screenshot numbering; call it first in beforeAll. */
export function resetArtifacts(suite: string = currentSuite()): void {
  rmSync(artifactsDir(suite), { recursive: true, force: true });
  shotCounters.set(suite, 0);
}

/**
 * Saves a numbered PNG of the browser window (test-artifacts/e2e/<suite>/NN-<name>.png) so a person can check what
 * the user saw. The suite defaults to the running test file's name; unless resetArtifacts() ran, the
 * first shot of a run clears the suite's old screenshots.
 */
export async function screenshot(page: Page, name: string, suite: string = currentSuite()): Promise<string> {
  const dir = artifactsDir(suite);
  const previous = shotCounters.get(suite);
  if (previous === undefined) {
    rmSync(dir, { recursive: true, force: true });
  }
  const index = (previous ?? 0) + 1;
  shotCounters.set(suite, index);
  mkdirSync(dir, { recursive: true });
  const safeName = name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');
  const path = join(dir, `${String(index).padStart(2, '0')}-${safeName}.png`);
  await page.screenshot({ path });
  return path;
}

function currentSuite(): string {
  const testPath = expect.getState().testPath;
  return testPath === undefined ? 'e2e' : basename(testPath).replace(/\.test\.ts$/, '');
}

/**
 * Takes the keyboard out of a webview (a review panel or results view that took it keeps Ctrl+P and F1):
 * a click on the active editor's tab when there is one (a text editor keeps the keyboard in the
 * workbench), else on the status bar's empty left corner.
 */
export async function keyboardToWorkbench(page: Page): Promise<void> {
  if (!(await page.evaluate(() => document.activeElement?.tagName === 'IFRAME'))) return;
  const tab = page.locator('.part.editor .tabs-container .tab.active').first();
  if ((await tab.count()) > 0 && (await tab.isVisible())) await tab.click();
  else await page.locator('.part.statusbar').click({ position: { x: 5, y: 5 } });
}

/** The text of the visible editor's lines in view, white space folded. */
export async function editorText(page: Page): Promise<string> {
  return (await page.locator('.part.editor .monaco-editor .view-lines').first().innerText()).replace(/\s+/g, ' ');
}

/** Clicks the visible editor's line containing `text`: the caret moves there and the editor has the keyboard. */
export async function clickEditorLine(page: Page, text: string): Promise<void> {
  await page.locator('.part.editor .monaco-editor .view-line', { hasText: text }).first().click();
}

/** Quick Open (Ctrl+P), the file's name, Enter on it; waits for its tab to be the active one. */
export async function openFile(page: Page, name: string): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  // Quick Open that shows without the keyboard (seen after a click in the panel's card and then on the editor:
  // the keys went to the editor) is closed and opened again, as pickCommand does with the palette.
  for (let attempt = 1; ; attempt++) {
    await keyboardToWorkbench(page);
    await page.keyboard.press('Control+P');
    try {
      await widget.waitFor({ state: 'visible', timeout: 5_000 });
    } catch {
      // Ctrl+P did not reach the workbench: the palette's "Go to File..." opens the same picker.
      await pickCommand(page, 'Go to File...');
    }
    if (await quickInputHasKeyboard(page)) break;
    if (attempt === 3) throw new Error('The quick input did not get the keyboard');
    await closeQuickInput(page);
    await page.locator('.part.editor .tabs-container .tab.active').first().click();
  }
  await page.keyboard.type(name);
  // Results arrive in stages (recently opened, then the file search), re-ordering the rows under the mouse:
  // Enter on the focused row once it is our file, which the picker ranks first for an exact name.
  const ours = {
    has: page.locator('.label-name', { hasText: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }),
  };
  try {
    await widget.locator('.monaco-list-row.focused', ours).waitFor({ state: 'visible', timeout: 10_000 });
    await page.keyboard.press('Enter');
  } catch {
    await widget.locator('.monaco-list-row', ours).first().click();
  }
  await widget.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
  // The tab's label splits the name ("count" + ".sql"); its data-resource-name holds it whole.
  await page
    .locator(`.part.editor .tabs-container .tab.active[data-resource-name="${name}"]`)
    .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
}

/** The command that reviews the SQL of the active editor: a read shows its rows, a write is held. */
export const RUN_SQL_WITH_REVIEW = 'Postgres Agent: Run SQL with Review';

/** Opens the workspace file `name` and runs "Run SQL with Review" on it. */
export async function reviewFile(page: Page, name: string): Promise<void> {
  await openFile(page, name);
  await runCommand(page, RUN_SQL_WITH_REVIEW);
}

/**
 * Waits until the window's database is open (the side panel's connection line shows its database): the
 * sample database opens in a worker while the workbench stays usable, and a palette typed into meanwhile
 * can lose its keyboard when the views redraw as the connection completes.
 */
export async function databaseOpen(page: Page, timeoutMs = 150_000): Promise<void> {
  const panel = await findWebviewFrame(page, '[data-testid="connection-label"]', timeoutMs);
  await panel.locator('.connection .status.ok').waitFor({ state: 'visible', timeout: timeoutMs });
}

/** Answers the password input box (showInputBox({ password: true })) that asks `prompt`; checks it hides what is typed. */
export async function answerPasswordBox(page: Page, prompt: string, text: string): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  await widget
    .locator('.quick-input-message', { hasText: prompt })
    .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  const type = await widget.locator('input').first().getAttribute('type');
  if (type !== 'password')
    throw new Error(`The box asking "${prompt}" shows what is typed (input type ${String(type)})`);
  await typeInQuickInput(page, text);
  await page.keyboard.press('Enter');
}

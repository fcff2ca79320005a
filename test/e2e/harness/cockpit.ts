// The job cockpit (an editor panel per job) and the side panel's navigator as the E2E tests reach them:
// each cockpit's frame is found by its job's title (several cockpits may be open, hidden ones included).
import type { Frame, Page } from 'playwright-core';
import { expect } from 'vitest';
import { databaseOpen, findWebviewFrame, pickCommand, typeInQuickInput } from './workbench';

const UI_TIMEOUT_MS = 30_000;

/** The side panel (the navigator): the frame holding the job list. */
export function navigator(p: Page, timeoutMs = UI_TIMEOUT_MS): Promise<Frame> {
  return findWebviewFrame(p, '[data-testid="job-list"]', timeoutMs);
}

async function titleOf(frame: Frame): Promise<string | undefined> {
  if (frame.isDetached()) return undefined;
  try {
    const root = frame.locator('[data-testid="cockpit"]');
    if ((await root.count()) === 0) return undefined;
    return (await root.getAttribute('data-job-title')) ?? undefined;
  } catch {
    return undefined; // the frame went away while we read it
  }
}

/** The cockpit of the job titled `title` (its editor panel's inner frame). */
export async function cockpit(p: Page, title: string, timeoutMs = UI_TIMEOUT_MS): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of p.frames()) {
      if (frame !== p.mainFrame() && (await titleOf(frame)) === title) return frame;
    }
    if (Date.now() > deadline) throw new Error(`No cockpit of the job "${title}" after ${timeoutMs / 1000} s`);
    await p.waitForTimeout(250);
  }
}

/** Titles of the cockpits open (hidden ones included). */
export async function cockpitTitles(p: Page): Promise<string[]> {
  const titles: string[] = [];
  for (const frame of p.frames()) {
    if (frame === p.mainFrame()) continue;
    const title = await titleOf(frame);
    if (title !== undefined) titles.push(title);
  }
  return titles;
}

export interface CockpitJobState {
  stop: string;
  status: string;
  busy: string;
  text: string;
}

export async function cockpitState(p: Page, title: string): Promise<CockpitJobState | undefined> {
  for (const frame of p.frames()) {
    if (frame === p.mainFrame() || (await titleOf(frame)) !== title) continue;
    try {
      const state = frame.locator('[data-testid="job-state"]');
      return {
        stop: (await state.getAttribute('data-stop')) ?? '',
        status: (await state.getAttribute('data-status')) ?? '',
        busy: (await state.getAttribute('data-busy')) ?? '',
        text: (await state.innerText()).trim(),
      };
    } catch {
      // The frame went away while we read it.
    }
  }
  return undefined;
}

/** Waits until the job's cockpit shows it stopped at `stop` (this window no longer busy with it). */
export async function waitForCockpitStop(
  p: Page,
  title: string,
  stop: string,
  timeout: number,
  text?: RegExp,
): Promise<CockpitJobState> {
  await expect
    .poll(
      async () => {
        const s = await cockpitState(p, title);
        if (s === undefined) return '(no cockpit)';
        if (s.busy === 'true') return `(busy: ${s.text})`;
        if (text && !text.test(s.text)) return `(${s.stop}: ${s.text})`;
        return s.stop;
      },
      { timeout, interval: 250, message: `job "${title}" stopping at ${stop} in its cockpit` },
    )
    .toBe(stop);
  const s = await cockpitState(p, title);
  if (s === undefined) throw new Error('The cockpit went away');
  return s;
}

/** Inner texts (whitespace folded) of `selector` in a frame. */
export async function frameTexts(frame: Frame, selector: string): Promise<string[]> {
  return (await frame.locator(selector).allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
}

/**
 * Palette → New Job… → the task → Enter. With `afterDatabaseOpen` (a suite whose side panel shows the
 * connection) it first waits for the database to be open. The keyboard is taken out of a webview by a click on
 * the title bar's empty left part (F1 typed into a webview that just took it can get lost).
 */
export async function newJob(p: Page, task: string, options: { afterDatabaseOpen?: boolean } = {}): Promise<void> {
  if (options.afterDatabaseOpen ?? true) await databaseOpen(p);
  await p.locator('.part.titlebar').click({ position: { x: 120, y: 10 } });
  const widget = p.locator('.quick-input-widget');
  await pickCommand(p, 'Postgres Agent: New Job…');
  await widget
    .locator('.quick-input-title', { hasText: 'Postgres Agent: New Job' })
    .waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
  // The box replacing the palette does not always get the keyboard (a cockpit kept it): typed only once it has.
  await typeInQuickInput(p, task);
  await p.keyboard.press('Enter');
  await widget.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

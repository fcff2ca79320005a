/** What a person sees of a held write in the workbench: its CodeLens texts, and its card's status in the side panel. */
import type { Page } from 'playwright-core';
import { CODELENS_LINK } from './workbench';

/** The CodeLens texts of the open editor, white space folded. */
export async function lensTexts(page: Page): Promise<string[]> {
  return (await page.locator(CODELENS_LINK).allInnerTexts())
    .map((text) => text.replace(/\s+/g, ' ').trim())
    .filter((text) => text !== '');
}

/** The status of the newest approval card of exactly this SQL, in whichever webview shows it (undefined: none yet). */
export async function cardStatus(page: Page, sql: string): Promise<string | undefined> {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame() || frame.isDetached()) continue;
    try {
      const statuses = await frame
        .locator('[data-testid="approval-card"]')
        .evaluateAll(
          (cards, wanted) =>
            cards
              .filter((c) => c.querySelector('pre.sql')?.textContent?.trim() === wanted)
              .map((c) => c.getAttribute('data-status') ?? ''),
          sql,
        );
      if (statuses.length > 0) return statuses.at(-1);
    } catch {
      // Detached while we read it.
    }
  }
  return undefined;
}

// The Results view (an editor-area webview) as a test reads it: which tab is active, the grid's headers,
// its first drawn row and how many rows it holds.
import type { Page } from 'playwright-core';

export interface ShownResult {
  /** The active tab's id: a new result is a new tab, so a changed id means a fresh result. */
  tabId: string;
  title: string;
  headers: string[];
  /** The cells of the first row in view, as drawn ("NULL" for SQL NULL). */
  firstRow: string[];
  rowCount: number;
}

/** The Results view's active result, or undefined while there is none. */
export async function shownResult(page: Page): Promise<ShownResult | undefined> {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame() || frame.isDetached()) continue;
    try {
      const found = await frame.evaluate(() => {
        const grid = document.querySelector('[data-testid="results-grid"]');
        const tab = document.querySelector('[data-testid="result-tab"][aria-selected="true"]');
        if (!grid || !tab) return undefined;
        const texts = (root: ParentNode, selector: string) =>
          [...root.querySelectorAll(selector)].map((e) => e.textContent?.trim() ?? '');
        const first = grid.querySelector('[data-testid="result-row"]');
        return {
          tabId: tab.getAttribute('data-tab-id') ?? '',
          title: tab.textContent?.trim() ?? '',
          headers: texts(grid, '[data-testid="column-header"] .name').map((name) => name.replace(/ [▲▼]$/, '')),
          firstRow: first ? texts(first, '.cell') : [],
          rowCount: Number(grid.getAttribute('aria-rowcount') ?? '1') - 1,
        };
      });
      if (found) return found;
    } catch {
      // The frame navigated or went away while we read it.
    }
  }
  return undefined;
}

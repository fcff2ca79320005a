/** The Schema view's tree as a person sees it: its drawn rows, one row by its label, the labels in order. */
import type { Locator, Page } from 'playwright-core';

/** The Schema view's tree rows (only the rows in view are drawn). */
export function schemaTreeRows(p: Page): Locator {
  return p.locator('.pane:has(.pane-header[aria-label^="Schema"]) .monaco-list-row');
}

/** The first row whose label is exactly `label`. */
export function schemaTreeRow(p: Page, label: string): Locator {
  return schemaTreeRows(p)
    .filter({ has: p.locator('.label-name', { hasText: new RegExp(`^${label}$`) }) })
    .first();
}

export async function schemaTreeLabels(p: Page): Promise<string[]> {
  return schemaTreeRows(p).locator('.label-name').allInnerTexts();
}

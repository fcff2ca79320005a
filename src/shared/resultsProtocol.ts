/**
 * The results view's one protocol (an editor-area webview panel with a tab per result): the host pushes
 * the tab list and only the active tab's rows (rows are never sent twice); the webview sends intents,
 * each parsed here before the host acts on it (a webview is untrusted input).
 */
import { z } from 'zod';
import type { ResultsView } from './protocol';

export interface ResultTabInfo {
  id: string;
  title: string;
}

export type ResultsHostMessage = { type: 'results'; version: number; tabs: ResultTabInfo[]; active: string | null; result: ResultsView | null };

const tabId = z.string().regex(/^r\d{1,9}$/);
const index = z.number().int().min(0).max(10_000_000);

export const RESULTS_WEBVIEW_MESSAGE = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('selectTab'), id: tabId }),
  z.strictObject({ type: z.literal('closeTab'), id: tabId }),
  z.strictObject({ type: z.literal('export'), format: z.enum(['csv', 'json']) }),
  /** `row` is the row's index in the result as the host sent it (not in the sorted view). */
  z.strictObject({ type: z.literal('copy'), what: z.enum(['cell', 'row', 'column']), row: index, column: index }),
]);

export type ResultsWebviewMessage = z.infer<typeof RESULTS_WEBVIEW_MESSAGE>;

/** A cell as text for the clipboard: NULL as empty, objects and arrays as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** Field types whose values sort as numbers. */
export function isNumericType(type: string): boolean {
  return /^(smallint|integer|bigint|int[248]?|numeric|decimal|real|double precision|float[48]?|oid|money)\b/.test(type);
}

/**
 * Row indexes in display order: by `column`, numbers as numbers for numeric types, text by locale, NULLs
 * last whatever the direction; ties keep the result's order (a stable sort).
 */
export function sortedOrder(result: Pick<ResultsView, 'rows' | 'fields'>, column: number | null, descending: boolean): number[] {
  const order = result.rows.map((_, i) => i);
  if (column === null) return order;
  const numeric = isNumericType(result.fields[column]?.type ?? '');
  const value = (i: number) => result.rows[i]?.[column];
  return order.sort((a, b) => {
    const x = value(a);
    const y = value(b);
    const xNull = x === null || x === undefined;
    const yNull = y === null || y === undefined;
    if (xNull || yNull) return xNull === yNull ? a - b : xNull ? 1 : -1;
    const cmp = numeric ? Number(x) - Number(y) : cellText(x).localeCompare(cellText(y), undefined, { numeric: true });
    return (descending ? -cmp : cmp) || a - b;
  });
}

/** The rows a virtualized grid draws: those in view and `overscan` more on each side. */
export function visibleWindow(scrollTop: number, viewportHeight: number, rowHeight: number, rowCount: number, overscan = 10): { first: number; last: number } {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(rowCount, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return { first, last };
}

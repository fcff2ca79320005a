/**
 * The results grid's pure rules, shared by the webview (which sorts, windows and shows) and the host
 * (which copies and exports): no imports, so the webview bundle stays small.
 */
import type { ResultsView } from './protocol';

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
export function sortedOrder(
  result: Pick<ResultsView, 'rows' | 'fields'>,
  column: number | null,
  descending: boolean,
): number[] {
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
export function visibleWindow(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  rowCount: number,
  overscan = 10,
): { first: number; last: number } {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(rowCount, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return { first, last };
}

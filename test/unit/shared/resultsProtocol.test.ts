import { describe, expect, it } from 'vitest';
import { cellText, sortedOrder, visibleWindow } from '../../../src/shared/resultsGrid';
import { RESULTS_WEBVIEW_MESSAGE } from '../../../src/shared/resultsProtocol';

const result = {
  fields: [
    { name: 'id', type: 'bigint' },
    { name: 'email', type: 'text' },
    { name: 'total', type: 'numeric' },
  ],
  rows: [
    [1, 'b@x', '10.50'],
    [2, null, '9.00'],
    [3, 'a@x', null],
    [4, 'c@x', '100.00'],
  ],
};

describe('results view: sorting, windowing, copying, messages', () => {
  it('sorts numbers as numbers, text by locale, NULLs last both ways, ties in result order', () => {
    expect(sortedOrder(result, 2, false)).toEqual([1, 0, 3, 2]);
    expect(sortedOrder(result, 2, true)).toEqual([3, 0, 1, 2]);
    expect(sortedOrder(result, 1, false)).toEqual([2, 0, 3, 1]);
    expect(sortedOrder(result, null, false)).toEqual([0, 1, 2, 3]);
  });

  it('draws only the rows in view, with overscan, clamped to the result', () => {
    expect(visibleWindow(0, 220, 22, 10_000)).toEqual({ first: 0, last: 20 });
    expect(visibleWindow(22_000, 220, 22, 10_000)).toEqual({ first: 990, last: 1020 });
    expect(visibleWindow(219_800, 220, 22, 10_000)).toEqual({ first: 9980, last: 10_000 });
  });

  it('copies NULL as empty and JSON values as JSON', () => {
    expect(cellText(null)).toBe('');
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText(12.5)).toBe('12.5');
  });

  it("parses the webview's intents and refuses anything else", () => {
    expect(RESULTS_WEBVIEW_MESSAGE.safeParse({ type: 'copy', what: 'row', row: 3, column: 1 }).success).toBe(true);
    expect(RESULTS_WEBVIEW_MESSAGE.safeParse({ type: 'export', format: 'xml' }).success).toBe(false);
    expect(RESULTS_WEBVIEW_MESSAGE.safeParse({ type: 'selectTab', id: '../etc' }).success).toBe(false);
    expect(RESULTS_WEBVIEW_MESSAGE.safeParse({ type: 'copy', what: 'cell', row: -1, column: 0 }).success).toBe(false);
    expect(RESULTS_WEBVIEW_MESSAGE.safeParse({ type: 'ready', extra: 1 }).success).toBe(false);
  });
});

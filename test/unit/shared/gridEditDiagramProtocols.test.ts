/** The diagram's and the grid edits' webview messages are parsed before the host acts on them: malformed ones are refused. */
import { describe, expect, it } from 'vitest';
import { DIAGRAM_WEBVIEW_MESSAGE } from '../../../src/shared/diagramProtocol';
import { GRID_EDIT_WEBVIEW_MESSAGE } from '../../../src/shared/gridEditProtocol';
import { RESULTS_WEBVIEW_MESSAGE } from '../../../src/shared/resultsProtocol';

describe('diagram messages', () => {
  it('accepts the intents the page sends', () => {
    for (const message of [
      { type: 'ready' },
      { type: 'openSchema', schema: 'public' },
      { type: 'openNeighbourhood', schema: 'public', table: 'orders', depth: 2 },
      { type: 'search', query: 'ord' },
      { type: 'openTable', schema: 'shop', table: 'items' },
      { type: 'export', format: 'svg', data: '<?xml version="1.0"?><svg/>' },
    ])
      expect(DIAGRAM_WEBVIEW_MESSAGE.safeParse(message).success, JSON.stringify(message)).toBe(true);
  });

  it('refuses anything else', () => {
    for (const message of [
      { type: 'openNeighbourhood', schema: 'public', table: 'orders', depth: 3 },
      { type: 'openTable', schema: '', table: 'items' },
      { type: 'openTable', schema: 'shop', table: 'items', sql: 'DROP TABLE items' },
      { type: 'export', format: 'pdf', data: '' },
      { type: 'runSql', sql: 'SELECT 1' },
      null,
    ])
      expect(DIAGRAM_WEBVIEW_MESSAGE.safeParse(message).success, JSON.stringify(message)).toBe(false);
  });
});

describe('grid edit messages', () => {
  it('accepts edits by row and column index, NULL apart from text', () => {
    const message = {
      type: 'reviewEdits',
      tab: 'r3',
      edits: [
        { kind: 'update', row: 0, cells: [{ column: 1, value: { null: true } }] },
        { kind: 'update', row: 1, cells: [{ column: 1, value: { text: 'NULL' } }] },
        { kind: 'delete', row: 2 },
        { kind: 'insert', cells: [] },
      ],
    };
    expect(GRID_EDIT_WEBVIEW_MESSAGE.safeParse(message).success).toBe(true);
    // A grid edit is not a message of the results view's own protocol, and the other way round.
    expect(RESULTS_WEBVIEW_MESSAGE.safeParse(message).success).toBe(false);
    expect(GRID_EDIT_WEBVIEW_MESSAGE.safeParse({ type: 'ready' }).success).toBe(false);
  });

  it('refuses read values, SQL, bad indexes and empty reviews', () => {
    for (const message of [
      { type: 'reviewEdits', tab: 'r3', edits: [] },
      { type: 'reviewEdits', tab: 'x', edits: [{ kind: 'delete', row: 0 }] },
      { type: 'reviewEdits', tab: 'r3', edits: [{ kind: 'delete', row: -1 }] },
      { type: 'reviewEdits', tab: 'r3', edits: [{ kind: 'update', row: 0, cells: [] }] },
      { type: 'reviewEdits', tab: 'r3', edits: [{ kind: 'delete', row: 0, where: 'true' }] },
      { type: 'reviewEdits', tab: 'r3', sql: 'DELETE FROM items', edits: [{ kind: 'delete', row: 0 }] },
      {
        type: 'reviewEdits',
        tab: 'r3',
        edits: [{ kind: 'update', row: 0, cells: [{ column: 1, value: { text: 'x', null: true } }] }],
      },
    ])
      expect(GRID_EDIT_WEBVIEW_MESSAGE.safeParse(message).success, JSON.stringify(message)).toBe(false);
  });
});

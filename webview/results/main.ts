/**
 * The results view (an editor-area panel, a tab per result): a virtualized grid — only the rows in view
 * are in the DOM, so 10,000 rows scroll like 10 — with a sticky header showing each column's type, sort
 * by a header (numbers as numbers, NULLs last), column resize by dragging a header's edge, a selected
 * cell moved with the arrow keys, copy of the cell / row / column (Ctrl/Cmd+C copies the cell) and CSV or
 * JSON export. The host owns the rows; copy and export are asked of it, which uses its own copy.
 */
import type { ResultsView } from '../../src/shared/protocol';
import type { ResultsHostMessage, ResultsWebviewMessage, ResultTabInfo } from '../../src/shared/resultsProtocol';
import { cellText, isNumericType, sortedOrder, visibleWindow } from '../../src/shared/resultsGrid';

import type { GridEditHostMessage } from '../../src/shared/gridEditProtocol';
import { el } from '../common/dom';
import { poster } from '../common/vscodeApi';
import { cellEdit, editActions, editCell, newRows, onEditState, onRerender, resetEdits } from './editing';

const post = poster<ResultsWebviewMessage>();

const ROW_HEIGHT = 22;
const MIN_WIDTH = 48;

let tabs: ResultTabInfo[] = [];
let active: string | null = null;
let result: ResultsView | null = null;
let version = -1;
let order: number[] = [];
let sort: { column: number | null; descending: boolean } = { column: null, descending: false };
let widths: number[] = [];
let selected = { row: 0, column: 0 };
/** Kept across re-renders (sorting, a new push) so the grid does not jump back to the top. */
let scrollTop = 0;
let redraw: () => void = () => undefined;

const app = document.getElementById('app') ?? document.body;

window.addEventListener('message', (event: MessageEvent<ResultsHostMessage | GridEditHostMessage>) => {
  const message = event.data;
  if (message?.type === 'editState') {
    onEditState(message.tab, message.state);
    return;
  }
  if (message?.type !== 'results' || message.version <= version) return;
  version = message.version;
  clearInterval(greeting);
  const changedTab =
    message.active !== active || message.result?.sql !== result?.sql || message.result?.rowCount !== result?.rowCount;
  tabs = message.tabs;
  active = message.active;
  result = message.result;
  if (changedTab) {
    sort = { column: null, descending: false };
    selected = { row: 0, column: 0 };
    scrollTop = 0;
    widths = (result?.fields ?? []).map((f) => Math.min(320, Math.max(90, (f.name.length + f.type.length) * 7)));
  }
  order = result ? sortedOrder(result, sort.column, sort.descending) : [];
  resetEdits(active);
  render();
});
onRerender(() => render());
// A view once stayed at "Loading…" for a whole E2E suite: the first 'ready' (or the host's answer) was lost
// while the panel was being made. It is said again each second until the host's first push arrives.
const greeting = setInterval(() => post({ type: 'ready' }), 1_000);
post({ type: 'ready' });

function render(): void {
  app.replaceChildren(
    tabBar(),
    ...(result
      ? [toolbar(result), grid(result), newRows(result)].filter((n): n is HTMLElement => n !== null)
      : [
          el(
            'p',
            { class: 'muted', 'data-testid': 'results-empty' },
            'Run a read (Run SQL with Review, Select First 100 Rows, Ask…) and its rows open here.',
          ),
        ]),
  );
}

function tabBar(): HTMLElement {
  return el(
    'div',
    { class: 'tabs', role: 'tablist' },
    ...tabs.map((tab) => {
      const select = el(
        'button',
        {
          class: 'tab-title',
          role: 'tab',
          'aria-selected': String(tab.id === active),
          'data-testid': 'result-tab',
          'data-tab-id': tab.id,
        },
        tab.title,
      );
      select.addEventListener('click', () => post({ type: 'selectTab', id: tab.id }));
      const close = el('button', { class: 'tab-close', 'aria-label': `Close ${tab.title}`, title: 'Close' }, '×');
      close.addEventListener('click', () => post({ type: 'closeTab', id: tab.id }));
      return el('span', { class: tab.id === active ? 'tab active' : 'tab' }, select, close);
    }),
  );
}

function toolbar(r: ResultsView): HTMLElement {
  const action = (label: string, testId: string, run: () => void) => {
    const b = el('button', { 'data-testid': testId }, label);
    b.addEventListener('click', run);
    return b;
  };
  const copy = (what: 'cell' | 'row' | 'column') =>
    post({ type: 'copy', what, row: order[selected.row] ?? 0, column: selected.column });
  const summary = `${r.rowCount.toLocaleString('en-US')} row${r.rowCount === 1 ? '' : 's'}${r.truncated ? ' (the first ones: the query has more than the row cap)' : ''} · ${r.elapsedMs} ms`;
  return el(
    'div',
    { class: 'toolbar' },
    el('span', { class: 'summary', 'data-testid': 'results-summary' }, summary),
    action('Copy cell', 'copy-cell', () => copy('cell')),
    action('Copy row', 'copy-row', () => copy('row')),
    action('Copy column', 'copy-column', () => copy('column')),
    action('Export CSV', 'export-csv', () => post({ type: 'export', format: 'csv' })),
    action('Export JSON', 'export-json', () => post({ type: 'export', format: 'json' })),
    ...editActions(active, { row: order[selected.row] ?? 0, column: selected.column }),
  );
}

function template(): string {
  return widths.map((w) => `${w}px`).join(' ');
}

function grid(r: ResultsView): HTMLElement {
  const header = el('div', { class: 'row header', role: 'row', style: `grid-template-columns: ${template()}` });
  r.fields.forEach((field, column) => {
    const arrow = sort.column === column ? (sort.descending ? ' ▼' : ' ▲') : '';
    const button = el(
      'button',
      {
        class: 'sort',
        'data-testid': 'column-header',
        'aria-sort': sort.column === column ? (sort.descending ? 'descending' : 'ascending') : 'none',
      },
      el('span', { class: 'name' }, `${field.name}${arrow}`),
      el('span', { class: 'type' }, field.type),
    );
    button.addEventListener('click', () => {
      sort = sort.column === column ? { column, descending: !sort.descending } : { column, descending: false };
      order = sortedOrder(r, sort.column, sort.descending);
      render();
    });
    const handle = el('span', { class: 'resize', 'aria-hidden': 'true' });
    handle.addEventListener('mousedown', (event) => startResize(event, column));
    header.append(
      el('div', { class: `cell head${isNumericType(field.type) ? ' num' : ''}`, role: 'columnheader' }, button, handle),
    );
  });
  const body = el('div', { class: 'body', style: `height: ${order.length * ROW_HEIGHT}px` });
  const viewport = el(
    'div',
    {
      class: 'viewport',
      tabindex: '0',
      role: 'grid',
      'aria-rowcount': String(r.rowCount + 1),
      'data-testid': 'results-grid',
    },
    header,
    body,
  );
  const draw = () => {
    const { first, last } = visibleWindow(viewport.scrollTop, viewport.clientHeight || 600, ROW_HEIGHT, order.length);
    const rows: HTMLElement[] = [];
    for (let i = first; i < last; i++) rows.push(rowElement(r, i));
    body.replaceChildren(...rows);
  };
  viewport.addEventListener('scroll', () => {
    scrollTop = viewport.scrollTop;
    draw();
  });
  viewport.addEventListener('keydown', (event) => onKey(event, viewport, draw, r));
  redraw = draw;
  requestAnimationFrame(() => {
    viewport.scrollTop = scrollTop;
    draw();
  });
  draw();
  return viewport;
}

function rowElement(r: ResultsView, position: number): HTMLElement {
  const source = order[position] ?? 0;
  const values = r.rows[source] ?? [];
  const row = el('div', {
    class: 'row',
    role: 'row',
    style: `top: ${position * ROW_HEIGHT}px; grid-template-columns: ${template()}`,
    'data-testid': 'result-row',
  });
  r.fields.forEach((field, column) => {
    const edit = cellEdit(source, column);
    const value = edit ? edit.value : values[column];
    const isSelected = selected.row === position && selected.column === column;
    const content =
      value === null || value === undefined
        ? el('span', { class: 'null' }, 'NULL')
        : document.createTextNode(cellText(value));
    const cell = el(
      'div',
      {
        class: `cell${isNumericType(field.type) ? ' num' : ''}${isSelected ? ' selected' : ''}${edit?.mark ?? ''}`,
        role: 'gridcell',
        title: cellText(value),
      },
      content,
    );
    cell.addEventListener('click', () => {
      selected = { row: position, column };
      redraw();
    });
    cell.addEventListener('dblclick', () => editCell(cell, source, column, values[column]));
    row.append(cell);
  });
  return row;
}

function onKey(event: KeyboardEvent, viewport: HTMLElement, draw: () => void, r: ResultsView): void {
  const moves: Record<string, [number, number]> = {
    ArrowUp: [-1, 0],
    ArrowDown: [1, 0],
    ArrowLeft: [0, -1],
    ArrowRight: [0, 1],
  };
  const move = moves[event.key];
  if (move) {
    event.preventDefault();
    selected = {
      row: Math.min(order.length - 1, Math.max(0, selected.row + move[0])),
      column: Math.min(r.fields.length - 1, Math.max(0, selected.column + move[1])),
    };
    const top = selected.row * ROW_HEIGHT;
    if (top < viewport.scrollTop + ROW_HEIGHT) viewport.scrollTop = Math.max(0, top - ROW_HEIGHT);
    else if (top > viewport.scrollTop + viewport.clientHeight - 2 * ROW_HEIGHT)
      viewport.scrollTop = top - viewport.clientHeight + 2 * ROW_HEIGHT;
    draw();
    return;
  }
  if (event.key === 'F2') {
    const source = order[selected.row] ?? 0;
    const cell = viewport.querySelectorAll<HTMLElement>('.cell.selected')[0];
    if (cell) editCell(cell, source, selected.column, r.rows[source]?.[selected.column]);
    return;
  }
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'c') {
    event.preventDefault();
    post({ type: 'copy', what: 'cell', row: order[selected.row] ?? 0, column: selected.column });
  }
}

function startResize(event: MouseEvent, column: number): void {
  event.preventDefault();
  event.stopPropagation();
  const startX = event.clientX;
  const startWidth = widths[column] ?? 100;
  const onMove = (move: MouseEvent) => {
    widths[column] = Math.max(MIN_WIDTH, startWidth + move.clientX - startX);
    for (const row of document.querySelectorAll<HTMLElement>('.row')) row.style.gridTemplateColumns = template();
  };
  const onUp = () => {
    window.removeEventListener('mousemove', onMove);
    window.removeEventListener('mouseup', onUp);
  };
  window.addEventListener('mousemove', onMove);
  window.addEventListener('mouseup', onUp);
}

/**
 * Edit mode of the results grid (issue 33): "Edit" asks the host whether the rows may be edited; then a double
 * click (or F2) edits a cell in PostgreSQL's input text, "Set NULL" makes it NULL (the text NULL stays text),
 * rows are deleted and added; "Review changes" sends the edits, by row index into the host's rows, and the host
 * turns them into one write at the inline approval. The edits stay here until that write ran.
 */
import type { CellInput, GridEdit, GridEditState, GridEditWebviewMessage } from '../../src/shared/gridEditProtocol';
import { inputText } from '../../src/shared/gridValues';
import type { ResultsView } from '../../src/shared/protocol';
import { el } from '../common/dom';
import { poster } from '../common/vscodeApi';

const post = poster<GridEditWebviewMessage>();

interface Edits {
  tab: string;
  state: GridEditState | null;
  /** The table column of each result column (null: not editable), as the host said when editing started. */
  columns: (string | null)[];
  cells: Map<string, CellInput>;
  deleted: Set<number>;
  inserts: Map<number, CellInput>[];
}

let edits: Edits | null = null;
let rerender: () => void = () => undefined;

const key = (row: number, column: number) => `${row}:${column}`;

export function onRerender(redraw: () => void): void {
  rerender = redraw;
}

/** A new tab (or other rows) drops the edits of the old one. */
export function resetEdits(tab: string | null): void {
  if (edits && edits.tab !== tab) edits = null;
}

export function onEditState(tab: string, state: GridEditState): void {
  if (!edits || edits.tab !== tab) {
    if (state.phase !== 'editing') return;
    edits = { tab, state, columns: state.columns, cells: new Map(), deleted: new Set(), inserts: [] };
  }
  edits.state = state;
  if (state.phase === 'editing') edits.columns = state.columns;
  if (state.phase === 'done') {
    edits.cells.clear();
    edits.deleted.clear();
    edits.inserts = [];
  }
  rerender();
}

function editable(column: number): boolean {
  // After a rejected or failed write the edits stay editable; while one is held they do not change.
  return edits !== null && edits.state?.phase !== 'held' && (edits.columns[column] ?? null) !== null;
}

function changes(): number {
  if (!edits) return 0;
  const rows = new Set([...edits.cells.keys()].map((k) => k.split(':')[0]));
  return rows.size + edits.deleted.size + edits.inserts.length;
}

/** The toolbar's edit actions for the active tab; `selected` is the selected cell (row index into the result). */
export function editActions(tab: string | null, selected: { row: number; column: number }): HTMLElement[] {
  const action = (label: string, testId: string, run: () => void, disabled = false) => {
    const b = el('button', { 'data-testid': testId, ...(disabled ? { disabled: '' } : {}) }, label);
    b.addEventListener('click', run);
    return b;
  };
  if (tab === null) return [];
  if (!edits || edits.tab !== tab || edits.state?.phase === 'refused' || edits.state?.phase === 'done') {
    const note = edits?.tab === tab && edits.state ? stateNote(edits.state) : null;
    return [action('Edit', 'edit-start', () => post({ type: 'startEdit', tab })), ...(note ? [note] : [])];
  }
  const current = edits;
  const waiting = current.state?.phase === 'held';
  return [
    action('Set NULL', 'edit-set-null', () => {
      if (!editable(selected.column) || current.deleted.has(selected.row)) return;
      current.cells.set(key(selected.row, selected.column), { null: true });
      rerender();
    }),
    action('Delete row', 'edit-delete-row', () => {
      if (current.deleted.has(selected.row)) current.deleted.delete(selected.row);
      else current.deleted.add(selected.row);
      for (const k of [...current.cells.keys()]) if (k.startsWith(`${selected.row}:`)) current.cells.delete(k);
      rerender();
    }),
    action('Add row', 'edit-add-row', () => {
      current.inserts.push(new Map());
      rerender();
    }),
    action(`Review changes (${changes()})`, 'edit-review', () => review(current), waiting || changes() === 0),
    action('Discard', 'edit-discard', () => {
      edits = null;
      rerender();
    }),
    ...(current.state ? [stateNote(current.state)].filter((n): n is HTMLElement => n !== null) : []),
  ];
}

function stateNote(state: GridEditState): HTMLElement | null {
  const text =
    state.phase === 'editing'
      ? `Editing ${state.table}: double-click a cell (or F2) to change it. Nothing is written until you approve the write.`
      : state.phase === 'refused'
        ? `Cannot edit: ${state.reason}`
        : state.phase === 'held'
          ? `Held for your approval in the editor beside: approve or reject it there (its CodeLens and card show the exact impact).${state.conflicts ? ` ⚠ ${state.conflicts}` : ''}`
          : state.message;
  const warn = state.phase === 'failed' || state.phase === 'refused' || (state.phase === 'held' && state.conflicts);
  return el('span', { class: warn ? 'edit-note warn' : 'edit-note', 'data-testid': 'edit-note' }, text);
}

function review(current: Edits): void {
  const byRow = new Map<number, { column: number; value: CellInput }[]>();
  for (const [k, value] of current.cells) {
    const [row, column] = k.split(':').map(Number) as [number, number];
    byRow.set(row, [...(byRow.get(row) ?? []), { column, value }]);
  }
  const list: GridEdit[] = [
    ...[...current.deleted].map((row): GridEdit => ({ kind: 'delete', row })),
    ...[...byRow].map(([row, cells]): GridEdit => ({ kind: 'update', row, cells })),
    ...current.inserts.map((cells): GridEdit => ({
      kind: 'insert',
      cells: [...cells].map(([column, value]) => ({ column, value })),
    })),
  ];
  if (list.length > 0) post({ type: 'reviewEdits', tab: current.tab, edits: list });
}

/** How a cell shows while editing: the new value and a mark, or nothing (shown as read). */
export function cellEdit(row: number, column: number): { value: unknown; mark: string } | undefined {
  if (!edits) return undefined;
  if (edits.deleted.has(row)) return { value: undefined, mark: ' deleted' };
  const edit = edits.cells.get(key(row, column));
  return edit ? { value: 'null' in edit ? null : edit.text, mark: ' edited' } : undefined;
}

/** Replaces a cell's content with an input; Enter keeps the text, Escape gives up. */
export function editCell(cell: HTMLElement, row: number, column: number, value: unknown): void {
  const current = edits;
  if (!current || !editable(column) || current.deleted.has(row) || current.state?.phase === 'held') return;
  const known = current.cells.get(key(row, column));
  const start = known ? ('null' in known ? '' : known.text) : (inputText(value) ?? '');
  const input = el('input', { class: 'cell-input', 'data-testid': 'cell-input', value: start }) as HTMLInputElement;
  const finish = (keep: boolean) => {
    if (keep && (input.value !== start || known)) current.cells.set(key(row, column), { text: input.value });
    rerender();
  };
  input.addEventListener('keydown', (event) => {
    event.stopPropagation();
    if (event.key === 'Enter') finish(true);
    else if (event.key === 'Escape') finish(false);
  });
  input.addEventListener('blur', () => finish(true));
  cell.replaceChildren(input);
  input.focus();
  input.select();
}

/** The rows being added, as a small form below the grid (columns left empty take their default). */
export function newRows(result: ResultsView): HTMLElement | null {
  const current = edits;
  if (!current || current.inserts.length === 0 || current.state?.phase === 'held') return null;
  return el(
    'div',
    { class: 'new-rows', 'data-testid': 'new-rows' },
    ...current.inserts.map((cells, n) =>
      el(
        'div',
        { class: 'new-row' },
        el('span', {}, `New row ${n + 1}:`),
        ...result.fields.flatMap((field, column) => {
          if ((current.columns[column] ?? null) === null) return [];
          const value = cells.get(column);
          const input = el('input', {
            placeholder: `${field.name} (default)`,
            title: `${field.name} ${field.type}`,
            'data-testid': 'new-row-input',
            value: value && 'text' in value ? value.text : '',
          }) as HTMLInputElement;
          input.addEventListener('change', () => {
            if (input.value === '') cells.delete(column);
            else cells.set(column, { text: input.value });
          });
          return [input];
        }),
      ),
    ),
  );
}

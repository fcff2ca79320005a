/**
 * The schema diagram (an editor tab): the host pushes a graph (a table's neighbourhood or one schema, never more
 * than it can lay out quickly, with a note saying which) and its ELK layout, with it when cached or just after;
 * this page draws the tables at once (placed provisionally until the layout comes), as SVG, and
 * sends intents back: another schema or depth, a search, a table clicked (its Schema tree node and first 100
 * rows), an export. Zoom is the page's own.
 */
import type { DiagramGraph, DiagramHostMessage, DiagramWebviewMessage } from '../../src/shared/diagramProtocol';
import { el } from '../common/dom';
import { poster } from '../common/vscodeApi';
import { drawDiagram } from './draw';
import { pngDataUrl, standaloneSvg } from './exportImage';
import type { Layout } from './layout';
import { placedLayout, provisionalLayout } from './layout';

const post = poster<DiagramWebviewMessage>();
const app = document.getElementById('app') ?? document.body;

let version = -1;
let graph: DiagramGraph | null = null;
let database = '';
let schemas: string[] = [];
let layout: Layout | null = null;
let scale = 1;
let matches: { schema: string; name: string }[] = [];
let query = '';
const canvas = el('div', { class: 'canvas', 'data-testid': 'diagram-canvas' });

window.addEventListener('message', (event: MessageEvent<DiagramHostMessage>) => {
  const message = event.data;
  if (message?.type === 'searchResults') {
    if (message.query !== query) return;
    matches = message.tables;
    renderMatches();
    return;
  }
  if (message?.type === 'layout') {
    if (message.version !== version || !graph) return;
    layout = placedLayout(graph, message.layout);
    scale = fitScale(layout);
    render();
    return;
  }
  if ((message?.type !== 'graph' && message?.type !== 'error') || message.version <= version) return;
  version = message.version;
  clearInterval(greeting);
  if (message.type === 'error') {
    app.replaceChildren(el('p', { class: 'error', 'data-testid': 'diagram-error' }, message.message));
    return;
  }
  graph = message.graph;
  // A new drawing closes the search's list (it would cover the toolbar).
  matches = [];
  query = '';
  renderMatches();
  database = message.database;
  schemas = message.schemas;
  layout = message.layout ? placedLayout(message.graph, message.layout) : provisionalLayout(message.graph);
  scale = fitScale(layout);
  render();
});
const greeting = setInterval(() => post({ type: 'ready' }), 1_000);
post({ type: 'ready' });

function fitScale(laid: Layout): number {
  const width = canvas.clientWidth || window.innerWidth || 1000;
  return Math.max(0.2, Math.min(1, (width - 40) / (laid.width + 40)));
}

const searchList = el('ul', { class: 'matches', 'data-testid': 'diagram-matches' });

function render(): void {
  if (!graph) return;
  const g = graph;
  const arranging = layout && !layout.final ? ' · arranging the tables…' : '';
  app.replaceChildren(
    toolbar(g),
    el(
      'p',
      { class: 'note', 'data-testid': 'diagram-note' },
      noteText(g),
      el('span', { class: 'arranging', 'data-testid': 'diagram-arranging' }, arranging),
    ),
    canvas,
  );
  redraw();
}

function noteText(g: DiagramGraph): string {
  return `${database} · ${g.note}`;
}

function redraw(): void {
  if (!layout) return;
  canvas.replaceChildren(drawDiagram(layout, scale, (schema, table) => post({ type: 'openTable', schema, table })));
  if (query.trim() !== '') jumpTo(query);
}

function action(label: string, testId: string, run: () => void, title = label): HTMLElement {
  const b = el('button', { 'data-testid': testId, title }, label);
  b.addEventListener('click', run);
  return b;
}

function toolbar(g: DiagramGraph): HTMLElement {
  const schemaPick = el('select', { 'data-testid': 'diagram-schema', 'aria-label': 'Schema' }) as HTMLSelectElement;
  for (const s of schemas) schemaPick.append(el('option', { value: s }, s));
  schemaPick.value = g.scope.schema;
  schemaPick.addEventListener('change', () => post({ type: 'openSchema', schema: schemaPick.value }));
  const scope = g.scope;
  const depth =
    scope.kind === 'neighbourhood'
      ? [1, 2].map((d) =>
          action(
            `Depth ${d}`,
            `diagram-depth-${d}`,
            () => post({ type: 'openNeighbourhood', schema: scope.schema, table: scope.table, depth: d as 1 | 2 }),
            `Tables up to ${d} foreign key${d === 1 ? '' : 's'} away`,
          ),
        )
      : [];
  const search = el('input', {
    type: 'search',
    placeholder: 'Find a table…',
    'data-testid': 'diagram-search',
    'aria-label': 'Find a table',
    value: query,
  }) as HTMLInputElement;
  search.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    matches = [];
    renderMatches();
  });
  search.addEventListener('input', () => {
    query = search.value;
    jumpTo(query);
    if (query.trim() === '') {
      matches = [];
      renderMatches();
    } else post({ type: 'search', query });
  });
  return el(
    'div',
    { class: 'toolbar' },
    el('label', {}, 'Schema ', schemaPick),
    ...depth,
    el('span', { class: 'search' }, search, searchList),
    action('−', 'diagram-zoom-out', () => zoom(scale / 1.25), 'Zoom out'),
    action('Fit', 'diagram-zoom-fit', () => layout && zoom(fitScale(layout)), 'Fit to the window'),
    action('+', 'diagram-zoom-in', () => zoom(scale * 1.25), 'Zoom in'),
    action('Export SVG', 'diagram-export-svg', () => void exportAs('svg')),
    action('Export PNG', 'diagram-export-png', () => void exportAs('png')),
  );
}

function zoom(next: number): void {
  scale = Math.max(0.1, Math.min(3, next));
  redraw();
}

/** A table drawn here whose name holds the text is scrolled into view and marked. */
function jumpTo(text: string): void {
  const needle = text.trim().toLowerCase();
  for (const node of canvas.querySelectorAll('.table.found')) node.classList.remove('found');
  if (needle === '') return;
  const boxes = [...canvas.querySelectorAll<SVGGElement>('[data-testid="diagram-table"]')];
  const found =
    boxes.find((b) => b.dataset['table']?.split('.').slice(1).join('.').toLowerCase() === needle) ??
    boxes.find((b) => b.dataset['table']?.toLowerCase().includes(needle));
  if (!found) return;
  found.classList.add('found');
  found.scrollIntoView({ block: 'center', inline: 'center' });
}

function renderMatches(): void {
  searchList.replaceChildren(
    ...matches.map((m) => {
      const item = el(
        'button',
        { 'data-testid': 'diagram-match', title: 'Show its neighbourhood' },
        `${m.schema}.${m.name}`,
      );
      item.addEventListener('click', () => {
        matches = [];
        query = '';
        post({ type: 'openNeighbourhood', schema: m.schema, table: m.name, depth: 1 });
      });
      return el('li', {}, item);
    }),
  );
}

async function exportAs(format: 'svg' | 'png'): Promise<void> {
  const svg = canvas.querySelector('svg');
  if (!svg || !layout) return;
  const text = standaloneSvg(svg);
  const viewBox = svg.viewBox.baseVal;
  const data = format === 'svg' ? text : await pngDataUrl(text, viewBox.width, viewBox.height);
  post({ type: 'export', format, data });
}

window.addEventListener('resize', () => {
  if (layout && graph) {
    scale = fitScale(layout);
    redraw();
  }
});

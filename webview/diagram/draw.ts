/**
 * The laid-out diagram as SVG: a box per table (name, columns with PK/FK marks and types), an arrow per foreign
 * key from the referencing table to the referenced one. Colours come from CSS classes (media/diagram.css, the
 * theme's variables), never from inline styles, so the page's CSP needs no 'unsafe-inline'.
 */
import type { Layout, PlacedTable } from './layout';
import { CHAR, HEAD, ROW } from '../../src/shared/diagramGeometry';

const NS = 'http://www.w3.org/2000/svg';
const MARGIN = 20;

export function svgEl(tag: string, attrs: Record<string, string | number> = {}, text?: string): SVGElement {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function tableBox(placed: PlacedTable, onOpen: (schema: string, name: string) => void): SVGElement {
  const { table, x, y, width, height } = placed;
  const group = svgEl('g', {
    class: `table${table.focus ? ' focus' : ''}`,
    transform: `translate(${x + MARGIN},${y + MARGIN})`,
    'data-testid': 'diagram-table',
    'data-table': table.id,
    tabindex: 0,
    role: 'button',
    'aria-label': `${table.kind.replace('_', ' ')} ${table.id}: show its first 100 rows`,
  });
  group.append(
    svgEl('title', {}, `${table.id} — click: reveal in the Schema view and show its first 100 rows`),
    svgEl('rect', { class: 'box', width, height, rx: 3 }),
    svgEl('rect', { class: 'head', width, height: HEAD, rx: 3 }),
    svgEl('text', { class: 'title', x: 8, y: 16 }, table.name),
  );
  table.columns.forEach((c, i) => {
    const top = HEAD + i * ROW + 13;
    const mark = c.pk ? 'PK' : c.fk ? 'FK' : '';
    if (mark) group.append(svgEl('text', { class: `mark ${mark.toLowerCase()}`, x: 6, y: top }, mark));
    group.append(
      svgEl('text', { class: `column${c.nullable ? '' : ' required'}`, x: 6 + 3 * CHAR, y: top }, c.name),
      svgEl('text', { class: 'type', x: width - 8, y: top, 'text-anchor': 'end' }, clip(c.type, 28)),
    );
  });
  if (table.moreColumns > 0)
    group.append(
      svgEl(
        'text',
        { class: 'more', x: 6 + 3 * CHAR, y: HEAD + table.columns.length * ROW + 13 },
        `+${table.moreColumns} more columns`,
      ),
    );
  const open = () => onOpen(table.schema, table.name);
  group.addEventListener('click', open);
  group.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') open();
  });
  return group;
}

/** The whole diagram; `scale` sets its drawn size (the viewBox stays the layout's). */
export function drawDiagram(
  layout: Layout,
  scale: number,
  onOpen: (schema: string, name: string) => void,
): SVGSVGElement {
  const width = layout.width + 2 * MARGIN;
  const height = layout.height + 2 * MARGIN;
  const svg = svgEl('svg', {
    xmlns: NS,
    class: layout.final ? 'diagram' : 'diagram provisional',
    // 'final' once ELK's layout is drawn; 'provisional' while the tables wait for it.
    'data-layout': layout.final ? 'final' : 'provisional',
    viewBox: `0 0 ${width} ${height}`,
    width: Math.ceil(width * scale),
    height: Math.ceil(height * scale),
    role: 'img',
    'data-testid': 'diagram-svg',
  }) as SVGSVGElement;
  const marker = svgEl('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 8,
    markerHeight: 8,
    orient: 'auto-start-reverse',
  });
  marker.append(svgEl('path', { class: 'arrowhead', d: 'M 0 0 L 10 5 L 0 10 z' }));
  const defs = svgEl('defs');
  defs.append(marker);
  svg.append(svgEl('rect', { class: 'background', width, height }), defs);
  for (const edge of layout.edges) {
    const d = edge.points.map((p, i) => `${i === 0 ? 'M' : 'L'} ${p.x + MARGIN} ${p.y + MARGIN}`).join(' ');
    const path = svgEl('path', { class: 'edge', d, 'marker-end': 'url(#arrow)', 'data-testid': 'diagram-edge' });
    path.append(svgEl('title', {}, edge.title));
    svg.append(path);
  }
  for (const placed of layout.tables) svg.append(tableBox(placed, onOpen));
  return svg;
}

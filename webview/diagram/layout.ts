/**
 * Where each table and foreign key goes on the page. The final layout is ELK's, computed by the host
 * (core/diagram/elkLayout.ts in a worker thread, cached) and sent with the graph or just after it; until it comes,
 * the tables are placed provisionally, at once: columns by foreign-key depth (a referencing table left of the one it
 * references, as ELK draws them), straight arrows. The first paint waits for no layout engine.
 */
import type { DiagramLayout, Point } from '../../src/shared/diagramGeometry';
import { sizeOf } from '../../src/shared/diagramGeometry';
import type { DiagramGraph, DiagramTable } from '../../src/shared/diagramProtocol';

export interface PlacedTable {
  table: DiagramTable;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge {
  id: string;
  from: string;
  to: string;
  title: string;
  points: Point[];
}

export interface Layout {
  tables: PlacedTable[];
  edges: PlacedEdge[];
  width: number;
  height: number;
  /** ELK's layout (false: the provisional placement shown until it comes). */
  final: boolean;
}

const GAP_X = 56;
const GAP_Y = 28;

const titleOf = (e: DiagramGraph['edges'][number]) =>
  `${e.name}: ${e.from} (${e.columns.join(', ')}) → ${e.to} (${e.references.join(', ')}), ON DELETE ${e.onDelete}`;

/** The host's ELK layout, joined to the graph it was computed for. */
export function placedLayout(graph: DiagramGraph, laid: DiagramLayout): Layout {
  const byId = new Map(graph.tables.map((t) => [t.id, t]));
  const tables = laid.tables.flatMap((n) => {
    const table = byId.get(n.id);
    return table ? [{ table, x: n.x, y: n.y, width: n.width, height: n.height }] : [];
  });
  const points = new Map(laid.edges.map((e) => [e.id, e.points]));
  const edges = graph.edges.flatMap((e) => {
    const route = points.get(e.id);
    return route ? [{ id: e.id, from: e.from, to: e.to, title: titleOf(e), points: route }] : [];
  });
  return { tables, edges, width: laid.width, height: laid.height, final: true };
}

/** Each table's column: the longest chain of foreign keys leading to it (a cycle is cut where it closes). */
function depths(graph: DiagramGraph): Map<string, number> {
  const into = new Map<string, string[]>();
  for (const e of graph.edges) {
    if (e.from === e.to) continue;
    const list = into.get(e.to);
    if (list) list.push(e.from);
    else into.set(e.to, [e.from]);
  }
  const depth = new Map<string, number>();
  const onPath = new Set<string>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (onPath.has(id)) return -1;
    onPath.add(id);
    let d = 0;
    for (const from of into.get(id) ?? []) d = Math.max(d, visit(from) + 1);
    onPath.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const t of graph.tables) visit(t.id);
  return depth;
}

/** The provisional placement: linear in tables and keys, no engine. */
export function provisionalLayout(graph: DiagramGraph): Layout {
  const depth = depths(graph);
  const sized = graph.tables.map((table) => ({ table, ...sizeOf(table) }));
  const area = sized.reduce((sum, t) => sum + (t.width + GAP_X) * (t.height + GAP_Y), 0);
  // A column taller than this goes on in the next one, so a schema of loose tables is not one long column.
  const maxHeight = Math.max(600, Math.sqrt(area) * 0.8);
  const byDepth = new Map<number, typeof sized>();
  for (const t of sized) {
    const d = depth.get(t.table.id) ?? 0;
    const list = byDepth.get(d);
    if (list) list.push(t);
    else byDepth.set(d, [t]);
  }
  const tables: PlacedTable[] = [];
  let x = 0;
  let width = 0;
  let height = 0;
  for (const d of [...byDepth.keys()].sort((p, q) => p - q)) {
    let y = 0;
    let columnWidth = 0;
    for (const t of byDepth.get(d) ?? []) {
      if (y > 0 && y + t.height > maxHeight) {
        x += columnWidth + GAP_X;
        y = 0;
        columnWidth = 0;
      }
      tables.push({ table: t.table, x, y, width: t.width, height: t.height });
      y += t.height + GAP_Y;
      columnWidth = Math.max(columnWidth, t.width);
      height = Math.max(height, y - GAP_Y);
    }
    width = x + columnWidth;
    x += columnWidth + GAP_X;
  }
  const at = new Map(tables.map((t) => [t.table.id, t]));
  const edges = graph.edges.flatMap((e) => {
    const from = at.get(e.from);
    const to = at.get(e.to);
    if (!from || !to) return [];
    const start = { x: from.x + from.width, y: from.y + from.height / 2 };
    const end = to.x >= start.x ? { x: to.x, y: to.y + to.height / 2 } : { x: to.x + to.width, y: to.y + 12 };
    return [{ id: e.id, from: e.from, to: e.to, title: titleOf(e), points: [start, end] }];
  });
  return { tables, edges, width, height, final: false };
}

/**
 * Where each table and foreign key goes: ELK's layered algorithm (elkjs, its bundled build: it runs in this page's
 * own thread, loads nothing and evaluates no code), tables sized from their text in the diagram's monospace font.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import type { ElkNode } from 'elkjs/lib/elk-api';
import type { DiagramGraph, DiagramTable } from '../../src/shared/diagramProtocol';

export const ROW = 18;
export const HEAD = 24;
export const CHAR = 7.2;
const PAD = 10;

export interface Point {
  x: number;
  y: number;
}

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
}

const elk = new ELK();

/** Rows drawn in a table box: its columns, and a "+N more columns" line when some are left out. */
export function rowsOf(table: DiagramTable): number {
  return table.columns.length + (table.moreColumns > 0 ? 1 : 0);
}

export function sizeOf(table: DiagramTable): { width: number; height: number } {
  const title = table.name.length + 2;
  const widest = Math.max(title, ...table.columns.map((c) => 4 + c.name.length + 2 + Math.min(c.type.length, 28)));
  return { width: Math.ceil(widest * CHAR + 2 * PAD), height: HEAD + rowsOf(table) * ROW + 6 };
}

export async function layoutGraph(graph: DiagramGraph): Promise<Layout> {
  const root: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.spacing.nodeNode': '28',
      'elk.layered.spacing.nodeNodeBetweenLayers': '56',
      // Measured on 100 tables (bench/diagram.bench.ts, and elkjs alone in Node): thoroughness 1 without the
      // greedy crossing switch lays out about twice as fast as thoroughness 3, the drawings hardly differ.
      'elk.layered.thoroughness': '1',
      'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
      'elk.separateConnectedComponents': 'true',
      'elk.spacing.componentComponent': '40',
    },
    children: graph.tables.map((t) => ({ id: t.id, ...sizeOf(t) })),
    edges: graph.edges.map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
  const laid = await elk.layout(root);
  const byId = new Map(graph.tables.map((t) => [t.id, t]));
  const tables: PlacedTable[] = (laid.children ?? []).flatMap((n) => {
    const table = byId.get(n.id);
    return table ? [{ table, x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0 }] : [];
  });
  const edgeById = new Map(graph.edges.map((e) => [e.id, e]));
  const edges: PlacedEdge[] = (laid.edges ?? []).flatMap((e) => {
    const edge = edgeById.get(e.id);
    const section = e.sections?.[0];
    if (!edge || !section) return [];
    return [
      {
        id: edge.id,
        from: edge.from,
        to: edge.to,
        title: `${edge.name}: ${edge.from} (${edge.columns.join(', ')}) → ${edge.to} (${edge.references.join(', ')}), ON DELETE ${edge.onDelete}`,
        points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint],
      },
    ];
  });
  return { tables, edges, width: laid.width ?? 0, height: laid.height ?? 0 };
}

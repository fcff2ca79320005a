/**
 * The schema diagram's layout: ELK's layered algorithm (elkjs) on the graph, tables sized from their text
 * (shared/diagramGeometry.ts). Runs where ELK is loaded: the layout worker thread of the extension host
 * (diagramLayoutWorker.ts), never the page, whose first paint does not wait for it.
 */
import type { ELK as ElkEngine, ElkNode } from 'elkjs/lib/elk-api';
import type { DiagramLayout } from '../../shared/diagramGeometry';
import { sizeOf } from '../../shared/diagramGeometry';
import type { DiagramGraph } from '../../shared/diagramProtocol';

const OPTIONS: Record<string, string> = {
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
};

export async function elkLayout(elk: ElkEngine, graph: DiagramGraph): Promise<DiagramLayout> {
  const root: ElkNode = {
    id: 'root',
    layoutOptions: OPTIONS,
    children: graph.tables.map((t) => ({ id: t.id, ...sizeOf(t) })),
    edges: graph.edges.map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
  const laid = await elk.layout(root);
  return {
    tables: (laid.children ?? []).map((n) => ({
      id: n.id,
      x: n.x ?? 0,
      y: n.y ?? 0,
      width: n.width ?? 0,
      height: n.height ?? 0,
    })),
    edges: (laid.edges ?? []).flatMap((e) => {
      const section = e.sections?.[0];
      return section
        ? [{ id: e.id, points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint] }]
        : [];
    }),
    width: laid.width ?? 0,
    height: laid.height ?? 0,
  };
}

/**
 * The schema diagram's page-side placement: the provisional one drawn at once (every table once, no overlap,
 * a referencing table left of the one it references, cycles cut) and the host's ELK layout joined to its graph.
 */
import { describe, expect, it } from 'vitest';
import { schemaGraph } from '../../../../src/core/db/schemaGraph';
import { layoutKey } from '../../../../src/core/diagram/diagramLayouts';
import type { DiagramGraph } from '../../../../src/shared/diagramProtocol';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { placedLayout, provisionalLayout } from '../../../../webview/diagram/layout';
import { bigSnapshot, col, domainTables, fk, table } from '../../../fixtures/bigSchema';

const shop: SchemaSnapshot = { database: 'shop', serverVersion: '16', tables: domainTables() };

function overlaps(l: ReturnType<typeof provisionalLayout>): string[] {
  const found: string[] = [];
  l.tables.forEach((a, i) => {
    for (const b of l.tables.slice(i + 1))
      if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
        found.push(`${a.table.id} / ${b.table.id}`);
  });
  return found;
}

describe('provisionalLayout', () => {
  it('places every table once, without overlap, inside its size, referencing tables left of referenced ones', () => {
    const g = schemaGraph(shop, 'public');
    const l = provisionalLayout(g);
    expect(l.final).toBe(false);
    expect(l.tables.map((t) => t.table.id).sort()).toEqual(g.tables.map((t) => t.id).sort());
    expect(overlaps(l)).toEqual([]);
    for (const t of l.tables) {
      expect(t.x + t.width).toBeLessThanOrEqual(l.width);
      expect(t.y + t.height).toBeLessThanOrEqual(l.height);
    }
    const at = new Map(l.tables.map((t) => [t.table.id, t]));
    for (const e of g.edges.filter((e) => e.from !== e.to))
      expect(at.get(e.from)!.x, `${e.from} -> ${e.to}`).toBeLessThan(at.get(e.to)!.x);
    expect(l.edges).toHaveLength(g.edges.length);
  });

  it('cuts a cycle of foreign keys and a self-reference without looping', () => {
    const tables = [
      table('a', [col('id', 'integer'), col('b_id', 'integer')], { foreignKeys: [fk('b_id', 'b')] }),
      table('b', [col('id', 'integer'), col('a_id', 'integer'), col('parent', 'integer')], {
        foreignKeys: [fk('a_id', 'a'), fk('parent', 'b')],
      }),
    ];
    const l = provisionalLayout(schemaGraph({ database: 'c', serverVersion: '16', tables }, 'public'));
    expect(l.tables).toHaveLength(2);
    expect(overlaps(l)).toEqual([]);
  });

  it('wraps a schema of many loose tables into several columns', () => {
    const g = schemaGraph(bigSnapshot(), 'public');
    const l = provisionalLayout(g);
    expect(l.tables).toHaveLength(g.tables.length);
    expect(overlaps(l)).toEqual([]);
    expect(new Set(l.tables.map((t) => t.x)).size).toBeGreaterThan(3);
  });
});

describe('placedLayout and layoutKey', () => {
  const g: DiagramGraph = schemaGraph(shop, 'public');

  it("joins the host's positions to the graph's tables and edges, and is final", () => {
    const laid = {
      tables: g.tables.map((t, i) => ({ id: t.id, x: i * 300, y: 0, width: 200, height: 100 })),
      edges: g.edges.map((e) => ({
        id: e.id,
        points: [
          { x: 0, y: 0 },
          { x: 10, y: 10 },
        ],
      })),
      width: g.tables.length * 300,
      height: 100,
    };
    const l = placedLayout(g, laid);
    expect(l.final).toBe(true);
    expect(l.tables.map((t) => t.table.id)).toEqual(g.tables.map((t) => t.id));
    expect(l.edges[0]?.title).toContain('ON DELETE');
  });

  it('changes when a box would change size or an edge comes, not otherwise', () => {
    expect(layoutKey(schemaGraph(shop, 'public'))).toBe(layoutKey(g));
    const wider = shop.tables.map((t) =>
      t.name === 'orders' ? { ...t, columns: [...t.columns, col('a_much_longer_column_name', 'text')] } : t,
    );
    expect(layoutKey(schemaGraph({ ...shop, tables: wider }, 'public'))).not.toBe(layoutKey(g));
    expect(layoutKey({ ...g, edges: g.edges.slice(1) })).not.toBe(layoutKey(g));
  });
});

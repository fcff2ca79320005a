/** The schema diagram's graph (issue 33): neighbourhoods along foreign keys both ways, one schema, the limit, search. */
import { describe, expect, it } from 'vitest';
import { diagramSchemas, neighbourhoodGraph, schemaGraph, searchTables } from '../../../../src/core/db/schemaGraph';
import { DIAGRAM_COLUMN_LIMIT, DIAGRAM_TABLE_LIMIT } from '../../../../src/shared/diagramProtocol';
import type { SchemaSnapshot } from '../../../../src/shared/schema';
import { bigSnapshot, col, domainTables, fk, table } from '../../../fixtures/bigSchema';

const shop: SchemaSnapshot = { database: 'shop', serverVersion: '16', tables: domainTables() };
const ids = (g: { tables: { id: string }[] }) => g.tables.map((t) => t.id).sort();

describe('neighbourhoodGraph', () => {
  it('depth 1: the tables a table references and those referencing it, with the edges between them', () => {
    const g = neighbourhoodGraph(shop, 'public', 'orders', 1);
    expect(ids(g)).toEqual(['public.customers', 'public.order_items', 'public.orders', 'public.payments']);
    expect(g.tables.find((t) => t.id === 'public.orders')?.focus).toBe(true);
    expect(g.edges.map((e) => `${e.from}->${e.to}`).sort()).toEqual([
      'public.order_items->public.orders',
      'public.orders->public.customers',
      'public.payments->public.orders',
    ]);
    expect(g.note).toContain('3 tables one foreign key away');
  });

  it('depth 2 reaches the tables of the neighbours, and edges to tables not drawn are left out', () => {
    const g = neighbourhoodGraph(shop, 'public', 'orders', 2);
    expect(ids(g)).toContain('public.products');
    expect(ids(g)).not.toContain('public.categories');
    expect(g.edges.every((e) => ids(g).includes(e.to) && ids(g).includes(e.from))).toBe(true);
    expect(g.edges.some((e) => e.to === 'public.categories')).toBe(false);
  });

  it('marks keys and caps the columns drawn', () => {
    const wide = table(
      'wide',
      Array.from({ length: DIAGRAM_COLUMN_LIMIT + 5 }, (_, i) => col(i === 0 ? 'id' : `c${i}`, 'integer')),
      { foreignKeys: [fk('c1', 'customers')] },
    );
    const g = neighbourhoodGraph({ ...shop, tables: [...shop.tables, wide] }, 'public', 'wide', 1);
    const w = g.tables.find((t) => t.name === 'wide');
    expect(w?.columns).toHaveLength(DIAGRAM_COLUMN_LIMIT);
    expect(w?.moreColumns).toBe(5);
    expect(w?.columns[0]).toMatchObject({ name: 'id', pk: true, fk: false });
    expect(w?.columns[1]).toMatchObject({ name: 'c1', pk: false, fk: true });
  });

  it('refuses a table that is not in the schema', () => {
    expect(() => neighbourhoodGraph(shop, 'public', 'nope', 1)).toThrow(/No table public\.nope/);
  });

  it('keeps the nearest tables when a neighbourhood is bigger than the limit, and says so', () => {
    const hub = table('hub', [col('id', 'bigint')]);
    const spokes = Array.from({ length: 300 }, (_, i) =>
      table(`spoke_${i}`, [col('id', 'bigint'), col('hub_id', 'bigint')], { foreignKeys: [fk('hub_id', 'hub')] }),
    );
    const g = neighbourhoodGraph({ ...shop, tables: [hub, ...spokes] }, 'public', 'hub', 1);
    expect(g.tables).toHaveLength(DIAGRAM_TABLE_LIMIT);
    expect(g.inScope).toBe(301);
    expect(g.note).toContain(`at most ${DIAGRAM_TABLE_LIMIT}`);
  });
});

describe('schemaGraph', () => {
  it('draws a small schema whole', () => {
    const other = table('elsewhere', [col('id')], { schema: 'crm' });
    const g = schemaGraph({ ...shop, tables: [...shop.tables, other] }, 'public');
    expect(g.tables).toHaveLength(shop.tables.length);
    expect(g.inScope).toBe(shop.tables.length);
    expect(g.note).toContain(`all ${shop.tables.length} tables`);
    expect(diagramSchemas({ ...shop, tables: [other, ...shop.tables] })).toEqual(['public', 'crm']);
  });

  it('on 2,000 tables draws the most connected within the limit and says how many were left out', () => {
    const big = bigSnapshot();
    const g = schemaGraph(big, 'public');
    expect(g.tables).toHaveLength(DIAGRAM_TABLE_LIMIT);
    expect(g.inScope).toBe(2000);
    expect(g.note).toContain('2,000 tables');
    expect(ids(g)).toContain('public.orders');
  });
});

describe('searchTables', () => {
  it('finds by part of a name, exact and prefix first', () => {
    expect(searchTables(shop, 'order').map((t) => t.name)).toEqual(['orders', 'order_items']);
    expect(searchTables(shop, 'ORDERS')[0]?.name).toBe('orders');
    expect(searchTables(shop, '   ')).toEqual([]);
    expect(searchTables(bigSnapshot(), 'module', 5)).toHaveLength(5);
  });
});

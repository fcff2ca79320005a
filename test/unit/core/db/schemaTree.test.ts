import { describe, expect, it } from 'vitest';
import {
  LEVEL_LIMIT,
  pagesShowing,
  schemaLevel,
  schemaTreeChildren,
  selectFirstRows,
  tablesLevel,
  TREE_PAGE,
} from '../../../../src/core/db/schemaTree';
import type { SchemaSnapshot, TableInfo } from '../../../../src/shared/schema';

function table(schema: string, name: string, extra: Partial<TableInfo> = {}): TableInfo {
  return {
    schema,
    name,
    kind: 'table',
    comment: null,
    rowEstimate: null,
    columns: [],
    primaryKey: null,
    uniqueConstraints: [],
    foreignKeys: [],
    indexes: [],
    triggers: [],
    ...extra,
  };
}

const orders = table('public', 'orders', {
  rowEstimate: 12_345,
  comment: 'one row per order',
  columns: [
    { name: 'id', type: 'bigint', nullable: false, default: null, comment: null },
    { name: 'customer_id', type: 'bigint', nullable: false, default: null, comment: 'who ordered' },
    { name: 'note', type: 'text', nullable: true, default: null, comment: null },
  ],
  primaryKey: ['id'],
  foreignKeys: [
    {
      name: 'orders_customer_id_fkey',
      columns: ['customer_id'],
      references: { schema: 'public', table: 'customers', columns: ['id'] },
      onDelete: 'CASCADE',
      onUpdate: 'NO ACTION',
    },
  ],
  indexes: [
    {
      name: 'orders_pkey',
      unique: true,
      primary: true,
      definition: 'CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)',
    },
  ],
  triggers: [
    {
      name: 'orders_audit',
      enabled: false,
      definition: 'CREATE TRIGGER orders_audit AFTER UPDATE ON public.orders FOR EACH ROW EXECUTE FUNCTION audit()',
    },
  ],
});
const snapshot: SchemaSnapshot = {
  database: 'shop',
  serverVersion: '15',
  tables: [
    table('audit', 'events'),
    orders,
    table('public', 'customers'),
    table('public', 'orders_2024', { partitionOf: { schema: 'public', table: 'orders' } }),
    table('public', 'big_orders', { kind: 'view' }),
  ],
};

describe('schema explorer tree', () => {
  it('lists schemas (public first), then tables and views by name, partitions left under their parent', () => {
    expect(schemaTreeChildren(snapshot, undefined, '')).toEqual([
      { kind: 'schema', schema: 'public', tables: 3 },
      { kind: 'schema', schema: 'audit', tables: 1 },
    ]);
    const tables = schemaTreeChildren(snapshot, { kind: 'schema', schema: 'public', tables: 3 }, '');
    expect(tables.map((n) => (n.kind === 'table' ? `${n.name}:${n.relation}` : n.kind))).toEqual([
      'big_orders:view',
      'customers:table',
      'orders:table',
    ]);
    expect(tables[2]).toMatchObject({ description: '~12.3k rows · one row per order' });
  });

  it("shows a table's columns with their keys, then its keys, indexes and triggers", () => {
    const node = schemaTreeChildren(snapshot, { kind: 'schema', schema: 'public', tables: 3 }, '')[2];
    if (node?.kind !== 'table') throw new Error('expected a table');
    const children = schemaTreeChildren(snapshot, node, '');
    expect(
      children.map((c) =>
        c.kind === 'column' ? `${c.label}: ${c.description}` : c.kind === 'group' ? `[${c.group} ${c.count}]` : c.kind,
      ),
    ).toEqual([
      'id: bigint · PK · NOT NULL',
      'customer_id: bigint · → customers.id · NOT NULL',
      'note: text',
      '[keys 2]',
      '[indexes 1]',
      '[triggers 1]',
    ]);
    const triggers = children[5];
    if (triggers?.kind !== 'group') throw new Error('expected a group');
    expect(schemaTreeChildren(snapshot, triggers, '')).toEqual([
      expect.objectContaining({ label: 'orders_audit', description: 'disabled' }),
    ]);
  });

  it('filters by name and keeps 5,000 tables to one level of LEVEL_LIMIT and a "more" node', () => {
    expect(schemaTreeChildren(snapshot, undefined, 'ORD')).toEqual([{ kind: 'schema', schema: 'public', tables: 2 }]);
    expect(schemaTreeChildren(snapshot, undefined, 'audit.ev')).toEqual([
      { kind: 'schema', schema: 'audit', tables: 1 },
    ]);
    const many: SchemaSnapshot = {
      ...snapshot,
      tables: Array.from({ length: 5000 }, (_, i) => table('public', `t_${String(i).padStart(4, '0')}`)),
    };
    const level = schemaTreeChildren(many, { kind: 'schema', schema: 'public', tables: 5000 }, '');
    expect(level).toHaveLength(LEVEL_LIMIT + 1);
    expect(level.at(-1)).toEqual({ kind: 'more', hidden: 5000 - LEVEL_LIMIT });
    expect(schemaTreeChildren(many, { kind: 'schema', schema: 'public', tables: 11 }, 't_012')).toHaveLength(10);
  });

  it('writes the first-rows query with names quoted only where needed', () => {
    expect(selectFirstRows('public', 'orders')).toBe('SELECT * FROM public.orders LIMIT 100;');
    expect(selectFirstRows('Sales', 'order items')).toBe('SELECT * FROM "Sales"."order items" LIMIT 100;');
    expect(selectFirstRows('public', 'user')).toBe('SELECT * FROM public."user" LIMIT 100;');
  });
});

const name = (i: number) => `t_${String(i).padStart(4, '0')}`;
/** 450 tables given in reverse order, and one partition (never shown: its parent stands for it). */
const many = [
  ...Array.from({ length: 450 }, (_, i) => table('big', name(449 - i))),
  table('big', 'z_part', { partitionOf: { schema: 'big', table: name(0) } }),
];
const names = (nodes: ReturnType<typeof tablesLevel>) => nodes.flatMap((n) => (n.kind === 'table' ? [n.name] : []));

describe('the Schema tree read by schema', () => {
  it('lists the schemas with their counts, public first', () => {
    expect(
      schemaLevel([
        { name: 'tenant_2', tables: 3 },
        { name: 'audit', tables: 1 },
        { name: 'public', tables: 7 },
      ]),
    ).toEqual([
      { kind: 'schema', schema: 'public', tables: 7 },
      { kind: 'schema', schema: 'audit', tables: 1 },
      { kind: 'schema', schema: 'tenant_2', tables: 3 },
    ]);
  });

  it('shows the first page of a schema in name order, then "Load more" with how many are left', () => {
    const level = tablesLevel('big', many, 1);
    expect(names(level)).toEqual(Array.from({ length: TREE_PAGE }, (_, i) => name(i)));
    expect(level.at(-1)).toEqual({ kind: 'loadMore', schema: 'big', remaining: 450 - TREE_PAGE });
  });

  it('each page more shows the next tables; the last page has no "Load more"', () => {
    const two = tablesLevel('big', many, 2);
    expect(names(two)).toHaveLength(2 * TREE_PAGE);
    expect(two.at(-1)).toEqual({ kind: 'loadMore', schema: 'big', remaining: 450 - 2 * TREE_PAGE });
    const all = tablesLevel('big', many, 3);
    expect(names(all)).toEqual(Array.from({ length: 450 }, (_, i) => name(i)));
    expect(all.some((n) => n.kind === 'loadMore')).toBe(false);
    expect(names(tablesLevel('big', many, 9))).toHaveLength(450);
  });

  it('a small schema has no "Load more"', () => {
    expect(tablesLevel('s', [table('s', 'b'), table('s', 'a')], 1).map((n) => n.kind)).toEqual(['table', 'table']);
  });

  it('says how many pages show a table (what revealing it loads); none for a partition or an unknown name', () => {
    expect(pagesShowing(many, name(0))).toBe(1);
    expect(pagesShowing(many, name(TREE_PAGE - 1))).toBe(1);
    expect(pagesShowing(many, name(TREE_PAGE))).toBe(2);
    expect(pagesShowing(many, name(449))).toBe(3);
    expect(pagesShowing(many, 'z_part')).toBeUndefined();
    expect(pagesShowing(many, 'nope')).toBeUndefined();
    // The page it names does hold it.
    expect(names(tablesLevel('big', many, pagesShowing(many, name(333)) ?? 0))).toContain(name(333));
  });
});

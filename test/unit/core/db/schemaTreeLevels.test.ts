import { describe, expect, it } from 'vitest';
import { pagesShowing, schemaLevel, TREE_PAGE, tablesLevel } from '../../../../src/core/db/schemaTree';
import type { TableInfo } from '../../../../src/shared/schema';

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

/**
 * The schema explorer's tree, as plain data from the catalog snapshot every caller shares (no query of its
 * own): schemas → tables and views → columns, keys, indexes, triggers. Children are computed per level
 * when a node is expanded; a filter keeps the tables whose name holds its text, and a level shows at most
 * LEVEL_LIMIT tables, then one "N more" node that asks for a narrower filter, so 5,000 tables stay usable.
 * Unfiltered, the tree is read by schema (schemaLevel, tablesLevel): the schemas with their counts from the cache's
 * index, then one schema's tables a page at a time (TREE_PAGE, as list_tables pages them) with a "Load more" node,
 * so 50,000 tables are never all decoded to draw it.
 */
import type { RelationKind, SchemaSnapshot, TableInfo } from '../../shared/schema';
import { qualifiedName } from '../../shared/sqlNames';
import { tablePage } from './tablePage';

export const LEVEL_LIMIT = 200;
/** Tables of a schema shown per page (and per "Load more"). */
export const TREE_PAGE = 200;

export type SchemaTreeNode =
  | { kind: 'schema'; schema: string; tables: number }
  | { kind: 'table'; schema: string; name: string; relation: RelationKind; description: string; tooltip: string }
  | { kind: 'group'; schema: string; table: string; group: 'keys' | 'indexes' | 'triggers'; count: number }
  | { kind: 'column'; label: string; description: string; tooltip: string }
  | {
      kind: 'detail';
      icon: 'key' | 'index' | 'trigger' | 'foreign-key';
      label: string;
      description: string;
      tooltip: string;
    }
  | { kind: 'more'; hidden: number }
  | { kind: 'loadMore'; schema: string; remaining: number };

function matches(table: TableInfo, filter: string): boolean {
  if (filter === '') return true;
  const needle = filter.toLowerCase();
  return table.name.toLowerCase().includes(needle) || `${table.schema}.${table.name}`.toLowerCase().includes(needle);
}

const rows = (n: number | null) =>
  n === null || n < 0
    ? ''
    : n >= 1e6
      ? `~${(n / 1e6).toFixed(1)}M rows`
      : n >= 1e3
        ? `~${(n / 1e3).toFixed(1)}k rows`
        : `~${Math.round(n)} rows`;

function tableNode(table: TableInfo): SchemaTreeNode {
  const kind = table.kind.replace('_', ' ');
  const description = [rows(table.rowEstimate), table.comment ?? ''].filter(Boolean).join(' · ');
  return {
    kind: 'table',
    schema: table.schema,
    name: table.name,
    relation: table.kind,
    description,
    tooltip: `${kind} ${qualifiedName(table.schema, table.name)}${table.rowEstimate !== null ? `\n${rows(table.rowEstimate)} (planner estimate)` : ''}${table.comment ? `\n\n${table.comment}` : ''}`,
  };
}

/** The tables the filter keeps, per schema, in name order. */
export function filteredTables(snapshot: SchemaSnapshot, filter: string): Map<string, TableInfo[]> {
  const bySchema = new Map<string, TableInfo[]>();
  for (const table of snapshot.tables) {
    if (table.partitionOf || !matches(table, filter.trim())) continue; // partitions show under nothing: their parent stands for them
    const list = bySchema.get(table.schema) ?? [];
    list.push(table);
    bySchema.set(table.schema, list);
  }
  for (const list of bySchema.values()) list.sort((a, b) => a.name.localeCompare(b.name));
  return bySchema;
}

export function schemaTreeChildren(
  snapshot: SchemaSnapshot,
  parent: SchemaTreeNode | undefined,
  filter: string,
): SchemaTreeNode[] {
  const tables = filteredTables(snapshot, filter);
  if (parent === undefined) {
    return [...tables.entries()]
      .sort(([a], [b]) => (a === 'public' ? -1 : b === 'public' ? 1 : a.localeCompare(b)))
      .map(([schema, list]) => ({ kind: 'schema', schema, tables: list.length }));
  }
  if (parent.kind === 'schema') {
    const list = tables.get(parent.schema) ?? [];
    const shown = list.slice(0, LEVEL_LIMIT).map(tableNode);
    return list.length > LEVEL_LIMIT ? [...shown, { kind: 'more', hidden: list.length - LEVEL_LIMIT }] : shown;
  }
  const table =
    parent.kind === 'table' || parent.kind === 'group'
      ? snapshot.tables.find(
          (t) => t.schema === parent.schema && t.name === (parent.kind === 'table' ? parent.name : parent.table),
        )
      : undefined;
  return table ? tableChildren(table, parent) : [];
}

/** The top level read by schema: each schema and its table count (public first), nothing decoded. */
export function schemaLevel(schemas: readonly { name: string; tables: number }[]): SchemaTreeNode[] {
  return [...schemas]
    .sort((a, b) => (a.name === 'public' ? -1 : b.name === 'public' ? 1 : a.name.localeCompare(b.name)))
    .map((s) => ({ kind: 'schema', schema: s.name, tables: s.tables }));
}

/**
 * One schema's tables, its first `pages` pages (partitions left out: their parent stands for them), then a
 * "Load more" node when some are left.
 */
export function tablesLevel(schema: string, tables: readonly TableInfo[], pages: number): SchemaTreeNode[] {
  const snapshot = { database: '', serverVersion: '', tables: tables.filter((t) => !t.partitionOf) };
  const nodes: SchemaTreeNode[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < pages; page++) {
    const next = tablePage(snapshot, { limit: TREE_PAGE, ...(cursor !== undefined ? { cursor } : {}) });
    nodes.push(...next.tables.map(tableNode));
    cursor = next.nextCursor;
    if (cursor === undefined) return nodes;
  }
  return [...nodes, { kind: 'loadMore', schema, remaining: snapshot.tables.length - nodes.length }];
}

/** How many pages of its schema show `name` (undefined: the schema has no such table in the tree). */
export function pagesShowing(tables: readonly TableInfo[], name: string): number | undefined {
  const shown = tables.filter((t) => !t.partitionOf);
  if (!shown.some((t) => t.name === name)) return undefined;
  const before = shown.filter((t) => t.name < name).length;
  return Math.floor(before / TREE_PAGE) + 1;
}

/** A table's own children (columns, then its keys, indexes and triggers) or a group's details. */
export function tableChildren(table: TableInfo, parent: SchemaTreeNode): SchemaTreeNode[] {
  if (parent.kind === 'table') return [...columnNodes(table), ...groupNodes(table)];
  if (parent.kind === 'group') return detailNodes(table, parent.group);
  return [];
}

function columnNodes(table: TableInfo): SchemaTreeNode[] {
  const pk = new Set(table.primaryKey ?? []);
  const fkOf = new Map(table.foreignKeys.filter((f) => f.columns.length === 1).map((f) => [f.columns[0] ?? '', f]));
  return table.columns.map((c) => {
    const fk = fkOf.get(c.name);
    const marks = [
      pk.has(c.name) ? 'PK' : '',
      fk ? `→ ${fk.references.table}.${fk.references.columns.join(', ')}` : '',
      c.nullable ? '' : 'NOT NULL',
    ].filter(Boolean);
    return {
      kind: 'column',
      label: c.name,
      description: [c.type, ...marks].join(' · '),
      tooltip: `${c.name} ${c.type}${c.nullable ? '' : ' NOT NULL'}${c.default !== null ? ` DEFAULT ${c.default}` : ''}${c.comment ? `\n\n${c.comment}` : ''}`,
    };
  });
}

function groupNodes(table: TableInfo): SchemaTreeNode[] {
  const keys = (table.primaryKey ? 1 : 0) + table.uniqueConstraints.length + table.foreignKeys.length;
  const groups: SchemaTreeNode[] = [];
  if (keys > 0) groups.push({ kind: 'group', schema: table.schema, table: table.name, group: 'keys', count: keys });
  if (table.indexes.length > 0)
    groups.push({
      kind: 'group',
      schema: table.schema,
      table: table.name,
      group: 'indexes',
      count: table.indexes.length,
    });
  if (table.triggers.length > 0)
    groups.push({
      kind: 'group',
      schema: table.schema,
      table: table.name,
      group: 'triggers',
      count: table.triggers.length,
    });
  return groups;
}

function detailNodes(table: TableInfo, group: 'keys' | 'indexes' | 'triggers'): SchemaTreeNode[] {
  if (group === 'keys') {
    return [
      ...(table.primaryKey
        ? [
            {
              kind: 'detail' as const,
              icon: 'key' as const,
              label: 'PRIMARY KEY',
              description: table.primaryKey.join(', '),
              tooltip: `PRIMARY KEY (${table.primaryKey.join(', ')})`,
            },
          ]
        : []),
      ...table.uniqueConstraints.map((cols) => ({
        kind: 'detail' as const,
        icon: 'key' as const,
        label: 'UNIQUE',
        description: cols.join(', '),
        tooltip: `UNIQUE (${cols.join(', ')})`,
      })),
      ...table.foreignKeys.map((f) => ({
        kind: 'detail' as const,
        icon: 'foreign-key' as const,
        label: f.name,
        description: `(${f.columns.join(', ')}) → ${f.references.table} (${f.references.columns.join(', ')})${f.onDelete !== 'NO ACTION' ? ` ON DELETE ${f.onDelete}` : ''}`,
        tooltip: `FOREIGN KEY (${f.columns.join(', ')}) REFERENCES ${f.references.schema}.${f.references.table} (${f.references.columns.join(', ')}) ON DELETE ${f.onDelete}`,
      })),
    ];
  }
  if (group === 'indexes') {
    return table.indexes.map((i) => ({
      kind: 'detail',
      icon: 'index',
      label: i.name,
      description: i.primary ? 'primary key' : i.unique ? 'unique' : '',
      tooltip: i.definition,
    }));
  }
  return table.triggers.map((t) => ({
    kind: 'detail',
    icon: 'trigger',
    label: t.name,
    description: t.enabled ? '' : 'disabled',
    tooltip: t.definition,
  }));
}

/** `SELECT * FROM <table> LIMIT 100`, the table's name quoted only where it must be. */
export function selectFirstRows(schema: string, name: string, limit = 100): string {
  return `SELECT * FROM ${qualifiedName(schema, name)} LIMIT ${limit};`;
}

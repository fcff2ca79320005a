/**
 * The schema diagram's graph as plain data, from the schema snapshot every caller shares (no query of its own):
 * a table's neighbourhood along foreign keys (both ways, depth 1 or 2) or one schema; never more than
 * DIAGRAM_TABLE_LIMIT tables (the ones nearest the focus, or the most connected of a schema), and the note
 * says what was left out. The incoming-reference index is built once per snapshot.
 */
import type { DiagramEdge, DiagramGraph, DiagramScope, DiagramTable } from '../../shared/diagramProtocol';
import { DIAGRAM_COLUMN_LIMIT, DIAGRAM_TABLE_LIMIT } from '../../shared/diagramProtocol';
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';

interface Index {
  byId: Map<string, TableInfo>;
  /** Table id → ids of the tables whose foreign keys reference it. */
  referencedBy: Map<string, Set<string>>;
}

const indexes = new WeakMap<SchemaSnapshot, Index>();

export const tableId = (schema: string, name: string): string => `${schema}.${name}`;

function indexOf(snapshot: SchemaSnapshot): Index {
  const known = indexes.get(snapshot);
  if (known) return known;
  const byId = new Map<string, TableInfo>();
  const referencedBy = new Map<string, Set<string>>();
  for (const t of snapshot.tables) byId.set(tableId(t.schema, t.name), t);
  for (const t of snapshot.tables) {
    const from = tableId(t.schema, t.name);
    for (const fk of t.foreignKeys) {
      const to = tableId(fk.references.schema, fk.references.table);
      let set = referencedBy.get(to);
      if (!set) referencedBy.set(to, (set = new Set()));
      set.add(from);
    }
  }
  const index = { byId, referencedBy };
  indexes.set(snapshot, index);
  return index;
}

/** Tables one foreign key away, either way. */
function neighbours(index: Index, id: string): string[] {
  const t = index.byId.get(id);
  const out = (t?.foreignKeys ?? []).map((fk) => tableId(fk.references.schema, fk.references.table));
  return [...out, ...(index.referencedBy.get(id) ?? [])].filter((n) => index.byId.has(n));
}

/** The schemas of the snapshot, `public` first, then by name. */
export function diagramSchemas(snapshot: SchemaSnapshot): string[] {
  return [...new Set(snapshot.tables.map((t) => t.schema))].sort((a, b) =>
    a === 'public' ? -1 : b === 'public' ? 1 : a.localeCompare(b),
  );
}

/**
 * The tables within `depth` foreign keys of `schema.table` (breadth first, nearest kept when there are more
 * than the limit). Throws when the table is not in the snapshot.
 */
export function neighbourhoodGraph(
  snapshot: SchemaSnapshot,
  schema: string,
  table: string,
  depth: 1 | 2,
  limit = DIAGRAM_TABLE_LIMIT,
): DiagramGraph {
  const index = indexOf(snapshot);
  const focus = tableId(schema, table);
  if (!index.byId.has(focus)) throw new Error(`No table ${focus} in the schema.`);
  const seen = new Set<string>([focus]);
  let frontier = [focus];
  for (let level = 0; level < depth; level++) {
    const next: string[] = [];
    for (const id of frontier)
      for (const n of neighbours(index, id))
        if (!seen.has(n)) {
          seen.add(n);
          next.push(n);
        }
    frontier = next;
  }
  const ids = [...seen];
  const drawn = ids.slice(0, limit);
  const scope: DiagramScope = { kind: 'neighbourhood', schema, table, depth };
  const reach = `${depth === 1 ? 'one foreign key' : 'two foreign keys'} away, either way`;
  const note =
    ids.length > drawn.length
      ? `${focus} and the ${drawn.length - 1} nearest of ${ids.length - 1} tables ${reach} (at most ${limit} are laid out at once)`
      : `${focus} and ${ids.length - 1} table${ids.length === 2 ? '' : 's'} ${reach}`;
  return build(index, drawn, focus, scope, ids.length, note);
}

/** One schema's tables; above the limit, the most connected ones (by foreign keys, then by name). */
export function schemaGraph(snapshot: SchemaSnapshot, schema: string, limit = DIAGRAM_TABLE_LIMIT): DiagramGraph {
  const index = indexOf(snapshot);
  const tables = snapshot.tables.filter((t) => t.schema === schema && !t.partitionOf);
  const ids = tables.map((t) => tableId(t.schema, t.name));
  const scope: DiagramScope = { kind: 'schema', schema };
  if (ids.length <= limit) {
    const note = `schema ${schema}: all ${ids.length} table${ids.length === 1 ? '' : 's'}`;
    return build(index, ids.sort(), null, scope, ids.length, note);
  }
  const degree = (id: string) => neighbours(index, id).length;
  const ranked = ids
    .map((id) => ({ id, degree: degree(id) }))
    .sort((a, b) => b.degree - a.degree || a.id.localeCompare(b.id))
    .slice(0, limit)
    .map((r) => r.id);
  const note = `schema ${schema}: the ${limit} most connected of ${ids.length.toLocaleString('en-US')} tables (at most ${limit} are laid out at once; search a table to see its neighbourhood)`;
  return build(index, ranked, null, scope, ids.length, note);
}

function build(
  index: Index,
  ids: string[],
  focus: string | null,
  scope: DiagramScope,
  inScope: number,
  note: string,
): DiagramGraph {
  const drawn = new Set(ids);
  const tables: DiagramTable[] = [];
  const edges: DiagramEdge[] = [];
  for (const id of ids) {
    const t = index.byId.get(id);
    if (!t) continue;
    const pk = new Set(t.primaryKey ?? []);
    const fkColumns = new Set(t.foreignKeys.flatMap((fk) => fk.columns));
    tables.push({
      id,
      schema: t.schema,
      name: t.name,
      kind: t.kind,
      columns: t.columns.slice(0, DIAGRAM_COLUMN_LIMIT).map((c) => ({
        name: c.name,
        type: c.type,
        pk: pk.has(c.name),
        fk: fkColumns.has(c.name),
        nullable: c.nullable,
      })),
      moreColumns: Math.max(0, t.columns.length - DIAGRAM_COLUMN_LIMIT),
      focus: id === focus,
    });
    for (const fk of t.foreignKeys) {
      const to = tableId(fk.references.schema, fk.references.table);
      if (!drawn.has(to)) continue;
      edges.push({
        id: `${id}:${fk.name}`,
        from: id,
        to,
        name: fk.name,
        columns: fk.columns,
        references: fk.references.columns,
        onDelete: fk.onDelete,
      });
    }
  }
  return { scope, tables, edges, inScope, note };
}

/** Tables whose name (or `schema.name`) holds `query`, case-insensitive, best first (exact, prefix, then any). */
export function searchTables(snapshot: SchemaSnapshot, query: string, max = 30): { schema: string; name: string }[] {
  const needle = query.trim().toLowerCase();
  if (needle === '') return [];
  const rank = (t: TableInfo) => {
    const name = t.name.toLowerCase();
    return name === needle ? 0 : name.startsWith(needle) ? 1 : 2;
  };
  return snapshot.tables
    .filter((t) => !t.partitionOf && tableId(t.schema, t.name).toLowerCase().includes(needle))
    .sort((a, b) => rank(a) - rank(b) || a.name.length - b.name.length || a.name.localeCompare(b.name))
    .slice(0, max)
    .map((t) => ({ schema: t.schema, name: t.name }));
}

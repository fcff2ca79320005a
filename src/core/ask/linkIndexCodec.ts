/**
 * The linking index (linking/schemaIndex.ts) as stored with the schema cache, so that a process answering
 * `context` loads it instead of building it (seconds at 50,000 tables). Tables are stored by name: a loaded index
 * gets its entries' tables from the cache (only the schemas holding an entry's table, usually one per tenant
 * group), and a group's other schemas' tables are filled in for the schemas a question is shown in
 * (fillGroupTables). Everything else is kept as built, in the same order (posting lists, the graph's
 * neighbour lists, name terms), so the ranking over a loaded index is the ranking over a built one: a test
 * holds the round trip to deep equality.
 */
import type { TableInfo } from '../../shared/schema';
import { FkGraph } from './fkGraph';
import type { Field, Posting, SchemaIndex, TableEntry } from './linking/schemaIndex';
import { fkTextOf, keyOf } from './linking/schemaIndex';

/** Bump when what the index holds changes shape. */
export const LINK_INDEX_FORMAT = 2;

const FIELDS: readonly Field[] = ['name', 'column', 'glued', 'allowed', 'comment', 'stat', 'sample'];

interface StoredEntry {
  schema: string;
  name: string;
  nameTerms: string[];
  members?: string[];
  schemas?: string[];
  /** Column, target text, target entry, followed by the ranking. */
  inferred?: [string, string, number, boolean][];
  owners?: number[];
}

export interface StoredLinkIndex {
  format: typeof LINK_INDEX_FORMAT;
  entries: StoredEntry[];
  /** "schema.table" of every table and its entry, as two parallel lists. */
  keys: string[];
  keyEntries: number[];
  /** Per term, its postings flattened: entry, field (index in FIELDS), column; three numbers each. */
  postings: [string, number[]][];
  graph: number[][];
  numberedTables: [string, number[]][];
  numberedSchemas: [string, string[]][];
  schemaTerms: [string, string[]][];
  schemaTokens?: number;
}

export function encodeLinkIndex(index: SchemaIndex): StoredLinkIndex {
  return {
    format: LINK_INDEX_FORMAT,
    entries: index.entries.map((e) => ({
      schema: e.table.schema,
      name: e.table.name,
      nameTerms: [...e.nameTerms],
      ...(e.members ? { members: e.members } : {}),
      ...(e.schemas ? { schemas: e.schemas } : {}),
      ...(e.inferred
        ? {
            inferred: [...e.inferred].map(([c, t]): [string, string, number, boolean] => [
              c,
              t.text,
              t.entry,
              t.followed,
            ]),
          }
        : {}),
      ...(e.owners ? { owners: e.owners } : {}),
    })),
    keys: [...index.byKey.keys()],
    keyEntries: [...index.byKey.values()],
    postings: [...index.postings].map(([term, list]) => [
      term,
      list.flatMap((p) => [p.table, FIELDS.indexOf(p.field), p.column]),
    ]),
    graph: index.graph.toLists(),
    numberedTables: [...index.numberedTables],
    numberedSchemas: [...index.numberedSchemas],
    schemaTerms: [...index.schemaTerms],
    ...(index.schemaTokens !== undefined ? { schemaTokens: index.schemaTokens } : {}),
  };
}

/** The schemas holding the entries' own tables: what must be decoded to load the index. */
export function entrySchemas(stored: StoredLinkIndex): string[] {
  return [...new Set(stored.entries.map((e) => e.schema))];
}

/**
 * The index again, its entries' tables taken from `tableOf`; undefined when the stored form is of another format
 * or a table is missing (the caller builds the index anew). A group's tables other than its own are left out
 * until fillGroupTables.
 */
export function decodeLinkIndex(
  stored: StoredLinkIndex,
  tableOf: (schema: string, name: string) => TableInfo | undefined,
): SchemaIndex | undefined {
  if (stored.format !== LINK_INDEX_FORMAT) return undefined;
  const entries: TableEntry[] = [];
  for (const e of stored.entries) {
    const table = tableOf(e.schema, e.name);
    if (!table) return undefined;
    const entry: TableEntry = {
      table,
      key: keyOf(table.schema, table.name),
      nameTerms: new Set(e.nameTerms),
      ...fkTextOf(table),
    };
    if (e.members) entry.members = e.members;
    if (e.schemas) {
      entry.groupTables = [table];
      entry.schemas = e.schemas;
    }
    if (e.inferred)
      entry.inferred = new Map(e.inferred.map(([c, text, target, followed]) => [c, { text, entry: target, followed }]));
    if (e.owners) entry.owners = e.owners;
    entries.push(entry);
  }
  const byKey = new Map<string, number>();
  stored.keys.forEach((key, i) => byKey.set(key, stored.keyEntries[i] ?? 0));
  const postings = new Map<string, Posting[]>();
  for (const [term, flat] of stored.postings) {
    const list: Posting[] = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      list.push({ table: flat[i] ?? 0, field: FIELDS[flat[i + 1] ?? 0] ?? 'name', column: flat[i + 2] ?? -1 });
    }
    postings.set(term, list);
  }
  return {
    entries,
    byKey,
    postings,
    graph: FkGraph.fromLists(stored.graph),
    numberedTables: new Map(stored.numberedTables),
    numberedSchemas: new Map(stored.numberedSchemas),
    schemaTerms: new Map(stored.schemaTerms),
    ...(stored.schemaTokens !== undefined ? { schemaTokens: stored.schemaTokens } : {}),
  };
}

/** Fills in each group's table in `schema` (its tables as the cache decoded them), where the group has one. */
export function fillGroupTables(index: SchemaIndex, schema: string, tables: readonly TableInfo[]): void {
  const byName = new Map(tables.map((t) => [t.name, t]));
  for (const entry of index.entries) {
    const at = entry.schemas?.indexOf(schema) ?? -1;
    const table = byName.get(entry.table.name);
    if (at > 0 && table && entry.groupTables) entry.groupTables[at] = table;
  }
}

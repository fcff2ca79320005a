/**
 * What a table is in its schema, read from its name and its foreign keys alone: its joins to other entries,
 * the plug-in module its name says it belongs to (a prefix many tables share: cisco_, nsxv_), and whether it
 * is a base table (the attributes every kind of resource keeps in one place). The ranking and the subject's
 * tables (subjectTables.ts) weigh tables by these roles; each is computed once per index.
 */
import { termOf } from '../tokens';
import type { SchemaIndex, TableEntry } from './schemaIndex';
import { keyOf } from './schemaIndex';

/** A first name word shared by at least this many tables of a schema is a module's prefix. */
const MODULE_PREFIX_TABLES = 3;
/** A base table: at least this many tables point at it, and this share of them are pointed at themselves. */
const BASE_REFERRERS = 3;
const BASE_ENTITY_SHARE = 2 / 3;

export interface Join {
  columns: readonly string[];
  /** The entry joined. */
  to: number;
}

/** An entry's joins to other entries: its declared foreign keys, and the inferred joins the ranking follows. */
export function joinsOf(index: SchemaIndex, from: TableEntry): Join[] {
  const joins: Join[] = [];
  for (const fk of from.table.foreignKeys) {
    const to = index.byKey.get(keyOf(fk.references.schema, fk.references.table));
    if (to !== undefined) joins.push({ columns: fk.columns, to });
  }
  for (const [column, target] of from.inferred ?? []) joins.push({ columns: [column], to: target.entry });
  return joins;
}

/** The entries an entry's declared foreign keys point at (the joins names only suggest left out). */
export function declaredTargets(index: SchemaIndex, from: TableEntry): number[] {
  return from.table.foreignKeys.flatMap((fk) => {
    const to = index.byKey.get(keyOf(fk.references.schema, fk.references.table));
    return to === undefined ? [] : [to];
  });
}

const prefixCache = new WeakMap<SchemaIndex, Map<string, number>>();

/**
 * "schema word" → how many entries of the schema have a name starting with that word and an underscore; a
 * prefix some table outside it points at (the application reads it: qos_policies from qospolicyrbacs) is
 * left out, since a plug-in's tables point at the core and the core never points at them.
 */
function modulePrefixes(index: SchemaIndex): Map<string, number> {
  let counts = prefixCache.get(index);
  if (counts) return counts;
  counts = new Map<string, number>();
  const prefixOf = (entry: TableEntry | undefined) => {
    const word = entry ? firstWord(entry) : undefined;
    return entry && word !== undefined ? `${entry.table.schema} ${word}` : undefined;
  };
  const core = new Set<string>();
  index.entries.forEach((entry) => {
    const own = prefixOf(entry);
    for (const to of declaredTargets(index, entry)) {
      const target = prefixOf(index.entries[to]);
      if (target !== undefined && target !== own) core.add(target);
    }
    if (own !== undefined) counts?.set(own, (counts.get(own) ?? 0) + 1);
  });
  for (const key of core) counts.delete(key);
  prefixCache.set(index, counts);
  return counts;
}

function firstWord(entry: TableEntry): string | undefined {
  return /^([a-z]+)_/i.exec(entry.table.name)?.[1]?.toLowerCase();
}

const entryPrefixCache = new WeakMap<SchemaIndex, Map<TableEntry, string | undefined>>();

/** The term of the module prefix `entry`'s name starts with, if it is one (see modulePrefixes); memoized. */
export function modulePrefixOf(index: SchemaIndex, entry: TableEntry): string | undefined {
  let cache = entryPrefixCache.get(index);
  if (!cache) entryPrefixCache.set(index, (cache = new Map<TableEntry, string | undefined>()));
  if (cache.has(entry)) return cache.get(entry);
  const word = firstWord(entry);
  const prefix =
    word === undefined || (modulePrefixes(index).get(`${entry.table.schema} ${word}`) ?? 0) < MODULE_PREFIX_TABLES
      ? undefined
      : (termOf(word)?.[0] ?? word);
  cache.set(entry, prefix);
  return prefix;
}

/** A plug-in's table the question does not name: its name starts with a module prefix the question does not say. */
export function isUnnamedPlugin(index: SchemaIndex, entry: TableEntry, questionTerms: ReadonlySet<string>): boolean {
  const prefix = modulePrefixOf(index, entry);
  return prefix !== undefined && !questionTerms.has(prefix);
}

const baseCache = new WeakMap<SchemaIndex, Map<number, boolean>>();

/**
 * A base table: it declares no foreign key of its own, at least BASE_REFERRERS tables point at it, and most of
 * those are entities themselves (other tables point at them): the attributes every kind of resource keeps in
 * one place (created, updated, description of ports, networks, routers), a supertype. What a resource keeps
 * there, and what belongs to its row there (its tags), is the resource's own, unlike a parent it merely
 * points at (the network a port is in).
 */
export function isBaseTable(index: SchemaIndex, e: number): boolean {
  let cache = baseCache.get(index);
  if (!cache) baseCache.set(index, (cache = new Map<number, boolean>()));
  let base = cache.get(e);
  if (base === undefined) {
    base = false;
    const entry = index.entries[e];
    if (entry && entry.table.foreignKeys.length === 0) {
      const referrers = referrersOf(index, e);
      const entities = referrers.filter((r) => referrersOf(index, r).some((x) => x !== e));
      base = referrers.length >= BASE_REFERRERS && entities.length >= BASE_ENTITY_SHARE * referrers.length;
    }
    cache.set(e, base);
  }
  return base;
}

/** The entries whose declared foreign keys point at `e` (itself left out). */
function referrersOf(index: SchemaIndex, e: number): number[] {
  return index.graph.neighbours(e).filter((n) => {
    const entry = index.entries[n];
    return n !== e && entry !== undefined && declaredTargets(index, entry).includes(e);
  });
}

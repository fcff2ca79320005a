/**
 * Columns, constraints, incoming foreign keys, indexes and triggers of one chunk of relations (introspect.ts reads the relations and
 * calls this per chunk). Rows come as text and are read by position. format_type and pg_get_indexdef run once per
 * distinct input (a type and modifier, an index that is not plain), never once per row; column lists and defaults
 * come once per distinct text with the relations that share it.
 */
import type { ColumnInfo, IncomingForeignKey, ReferentialAction, TableInfo } from '../../shared/schema';
import type { DbSession } from './db';
import { plainIndexDefinition, type ServerNaming } from './indexDefinition';
import type { ColumnLists, NameLists } from './sharedColumns';
import { ownColumns } from './sharedColumns';
import {
  COLUMN_COMMENTS_SQL,
  COLUMNS_SQL,
  CONSTRAINTS_SQL,
  DEFAULTS_SQL,
  COLUMN_NAMES_SQL,
  INCOMING_SQL,
  INDEX_DEFINITIONS_SQL,
  PRIMARY_KEYS_SQL,
  indexesSql,
  parseColumnList,
  RELATION_NAMES_SQL,
  textRows,
  TRIGGERS_SQL,
  TYPE_NAMES_SQL,
  type ChunkParams,
  type ColumnListRow,
  type ListedColumn,
  type CommentRow,
  type ConstraintRow,
  type DefaultRow,
  type IncomingRow,
  type IndexRow,
  type PrimaryKeyRow,
  type TriggerRow,
} from './introspectQueries';

const ACTIONS: Record<string, ReferentialAction> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

/** What a key's columns are until finishForeignKeys names them (replaced, never written to). */
const NOT_NAMED: string[] = [];

/** Enum labels and CHECK literals kept per column at most (a 200-label enum is a lookup table, not a hint). */
const MAX_ALLOWED_VALUES = 30;

/** One copy of each repeated string. */
export class Interner {
  private readonly strings = new Map<string, string>();
  of(value: string): string;
  of(value: string | null): string | null;
  of(value: string | null): string | null {
    if (value === null) return null;
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    this.strings.set(value, value);
    return value;
  }
}

/** What the chunks share: names and facts read once, and foreign keys whose target columns are named last. */
export interface IntrospectState {
  byOid: ReadonlyMap<string, TableInfo>;
  enumLabels: ReadonlyMap<string, string[]>;
  strings: Interner;
  naming: ServerNaming;
  /** The server has pg_index.indnullsnotdistinct (15+). */
  nullsNotDistinct: boolean;
  /** format_type by type oid, then modifier. */
  typeNames: Map<string, Map<string, string>>;
  columnNames: Map<string, string[]>;
  /** Column shapes by their COLUMNS_SQL text, read once for every chunk. */
  shapes: Map<string, ColumnShape>;
  /** The column lists made so far (a list several tables have is one frozen list). */
  columnLists: ColumnLists;
  /** A number per distinct default text: part of a column list's key. */
  defaultIds: Map<string, number>;
  /** Lists of column names, one frozen copy of each. */
  nameLists: NameLists;
  /** Key columns named last (those of relations not read yet): `owner.columns` is given the names. */
  pending: { owner: { columns: string[] }; oid: string; nums: readonly number[] }[];
  /** Foreign keys whose target lies outside the relations read: named by RELATION_NAMES_SQL, last. */
  outside: { references: { schema: string; table: string }; oid: string }[];
  /** Foreign keys pointing to relations read, with what orders them (source schema, table, key name). */
  incoming: { target: TableInfo; key: [string, string, string]; entry: IncomingForeignKey }[];
  /** Every user schema is read: every foreign key's source is among the relations read. */
  everySchema: boolean;
}

const intArray = (text: string | null): number[] => intWords(text).map(Number);

/** The elements of an array of integers (or oids) in its text form, `{1,2,3}`, as they are written. */
const intWords = (text: string | null): string[] => (text && text.length > 2 ? text.slice(1, -1).split(',') : []);

/** Columns, constraints, indexes and triggers of one chunk of relations, attached to their tables. */
export async function readChunk(session: DbSession, oids: readonly number[], state: IntrospectState): Promise<void> {
  // The oids, and the range they lie in (they come sorted).
  const chunk: ChunkParams = [oids.map(String), oids[0] ?? 0, oids.at(-1) ?? 0];
  const tables = await readColumns(session, chunk, state);
  await readConstraints(session, chunk, state);
  if (!state.everySchema) await readIncoming(session, chunk, state);
  await readIndexes(session, chunk, state, tables);
  for (const [oid, name, enabled, definition] of await textRows<TriggerRow>(session, TRIGGERS_SQL, chunk.slice(1))) {
    state.byOid.get(oid)?.triggers.push({ name, enabled: enabled === 't', definition });
  }
}

/** A table of the chunk: its shape, and the defaults and comments of its columns by attnum (when it has any). */
interface ChunkTable {
  table: TableInfo;
  shape: ColumnShape;
  defaults?: string[];
  comments?: string[];
}

/** A relation's columns as COLUMNS_SQL packs them: relations of the same shape share one (read-only), in every chunk. */
interface ColumnShape {
  /** Its number among the shapes read: the start of the key of a column list made from it. */
  id: number;
  columns: readonly ListedColumn[];
  /** By attnum (interned): what foreign keys and indexes name. */
  names: string[];
  types: string[];
  collations: string[];
  /** Its columns with their type names and enum labels, once the types are named. */
  typed?: { c: ListedColumn; type: string; labels: readonly string[] | undefined }[];
}

/** The chunk's columns and their defaults, by table: tables whose columns are alike share one frozen list. */
async function readColumns(
  session: DbSession,
  chunk: ChunkParams,
  state: IntrospectState,
): Promise<Map<string, ChunkTable>> {
  const { strings, typeNames, columnNames } = state;
  const rows = await textRows<ColumnListRow>(session, COLUMNS_SQL, chunk);
  const shapes: ColumnShape[] = [];
  const missing: [string, string][] = [];
  for (const [facts, names] of rows) {
    const key = `${facts}\u0000${names}`;
    let shape = state.shapes.get(key);
    if (!shape) {
      shape = { id: state.shapes.size, columns: parseColumnList(facts, names), names: [], types: [], collations: [] };
      state.shapes.set(key, shape);
      for (const c of shape.columns) {
        c.name = strings.of(c.name);
        shape.names[c.num] = c.name;
        shape.types[c.num] = strings.of(c.typeOid);
        shape.collations[c.num] = strings.of(c.collation);
        let byMod = typeNames.get(c.typeOid);
        if (!byMod) typeNames.set(c.typeOid, (byMod = new Map<string, string>()));
        if (!byMod.has(c.typmod)) {
          byMod.set(c.typmod, '');
          missing.push([c.typeOid, c.typmod]);
        }
      }
    }
    shapes.push(shape);
  }
  if (missing.length > 0) {
    const names = await textRows<[string]>(session, TYPE_NAMES_SQL, [
      missing.map((p) => p[0]),
      missing.map((p) => p[1]),
    ]);
    missing.forEach(([t, m], i) => typeNames.get(t)?.set(m, strings.of(names[i]?.[0] ?? '???')));
  }
  const tables = new Map<string, ChunkTable>();
  rows.forEach(([, , oids], r) => {
    const shape = shapes[r];
    if (!shape) return;
    shape.typed ??= shape.columns.map((c) => ({
      c,
      type: typeNames.get(c.typeOid)?.get(c.typmod) ?? '???',
      labels: state.enumLabels.get(c.typeOid)?.slice(0, MAX_ALLOWED_VALUES),
    }));
    for (const oid of intWords(oids)) {
      columnNames.set(oid, shape.names);
      const table = state.byOid.get(oid);
      if (table) tables.set(oid, { table, shape });
    }
  });
  for (const [oid, num, comment] of await textRows<CommentRow>(session, COLUMN_COMMENTS_SQL, chunk.slice(1))) {
    const at = tables.get(oid);
    if (at) (at.comments ??= [])[Number(num)] = comment;
  }
  await readDefaults(session, chunk, state, tables);
  for (const at of tables.values()) at.table.columns = state.columnLists.of(columnsKey(at, state), () => columnsOf(at));
  return tables;
}

/** What a table's column list is made of: its shape, its defaults (by number) and its comments. */
function columnsKey(at: ChunkTable, state: IntrospectState): string {
  let key = String(at.shape.id);
  if (at.defaults) {
    for (const c of at.shape.columns) {
      const text = at.defaults[c.num];
      let id = text === undefined ? undefined : state.defaultIds.get(text);
      if (text !== undefined && id === undefined) state.defaultIds.set(text, (id = state.defaultIds.size));
      key += id === undefined ? ',' : `,${id}`;
    }
  }
  if (at.comments) key += JSON.stringify(at.shape.columns.map((c) => at.comments?.[c.num] ?? null));
  return key;
}

function columnsOf(at: ChunkTable): ColumnInfo[] {
  return (at.shape.typed ?? []).map(({ c, type, labels }) => {
    const column: ColumnInfo = {
      name: c.name,
      type,
      nullable: !c.notNull,
      default: at.defaults?.[c.num] ?? null,
      comment: at.comments?.[c.num] ?? null,
    };
    if (labels) column.allowedValues = [...labels];
    return column;
  });
}

/** The chunk's defaults given to their tables (each distinct text comes once, with the columns that have it). */
async function readDefaults(
  session: DbSession,
  chunk: ChunkParams,
  state: IntrospectState,
  tables: ReadonlyMap<string, ChunkTable>,
): Promise<void> {
  for (const [expression, oids, nums] of await textRows<DefaultRow>(session, DEFAULTS_SQL, chunk)) {
    if (expression === null) continue; // no default is what a column has already
    const text = state.strings.of(expression);
    const at = intWords(nums);
    intWords(oids).forEach((oid, i) => {
      const table = tables.get(oid);
      if (table) (table.defaults ??= [])[Number(at[i])] = text;
    });
  }
}

async function readConstraints(session: DbSession, chunk: ChunkParams, state: IntrospectState): Promise<void> {
  const names = (oid: string, nums: readonly number[]) =>
    state.nameLists.of(nums.map((n) => state.columnNames.get(oid)?.[n] ?? `#${n}`));
  for (const [conkey, oids] of await textRows<PrimaryKeyRow>(session, PRIMARY_KEYS_SQL, chunk)) {
    const nums = intArray(conkey);
    for (const oid of intWords(oids)) {
      const table = state.byOid.get(oid);
      if (table) table.primaryKey = names(oid, nums);
    }
  }
  const rows = await textRows<ConstraintRow>(session, CONSTRAINTS_SQL, chunk);
  for (const [oid, name, type, conkey, refOid, confkey, onDelete, onUpdate, definition] of rows) {
    const table = state.byOid.get(oid);
    if (!table) continue;
    const columns = names(oid, intArray(conkey));
    if (type === 'c') attachCheckLiterals(table, columns, definition);
    else if (type === 'u') table.uniqueConstraints.push(columns);
    else {
      const target = state.byOid.get(refOid);
      const references = { schema: target?.schema ?? '?', table: target?.name ?? '?', columns: NOT_NAMED };
      state.pending.push({ owner: references, oid: refOid, nums: intArray(confkey) });
      if (!target) state.outside.push({ references, oid: refOid });
      table.foreignKeys.push({
        name,
        columns,
        references,
        onDelete: ACTIONS[onDelete] ?? 'NO ACTION',
        onUpdate: ACTIONS[onUpdate] ?? 'NO ACTION',
      });
      if (target) {
        const entry = {
          schema: table.schema,
          table: table.name,
          columns,
          onDelete: ACTIONS[onDelete] ?? 'NO ACTION',
        };
        state.incoming.push({ target, key: [table.schema, table.name, name], entry });
      }
    }
  }
}

/**
 * Foreign keys pointing to the chunk's tables from relations not read (those from relations read came with their
 * constraints); the referencing columns are named with the others, at the end.
 */
async function readIncoming(session: DbSession, chunk: ChunkParams, state: IntrospectState): Promise<void> {
  for (const [oid, schema, table, fromOid, conkey, onDelete, name] of await textRows<IncomingRow>(
    session,
    INCOMING_SQL,
    chunk,
  )) {
    const target = state.byOid.get(oid);
    if (!target || state.byOid.has(fromOid)) continue;
    const entry = {
      schema: state.strings.of(schema),
      table,
      columns: NOT_NAMED,
      onDelete: ACTIONS[onDelete] ?? 'NO ACTION',
    };
    state.pending.push({ owner: entry, oid: fromOid, nums: intArray(conkey) });
    state.incoming.push({ target, key: [entry.schema, table, name], entry });
  }
}

/** Byte order of the UTF-8 text (the order of PostgreSQL's `name`), which is the order of code points. */
function byCodePoint(a: string, b: string): number {
  if (a === b) return 0;
  const surrogates = /[\uD800-\uDFFF]/;
  if (!surrogates.test(a) && !surrogates.test(b)) return a < b ? -1 : 1;
  const x = [...a].map((c) => c.codePointAt(0) ?? 0);
  const y = [...b].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return x.length - y.length;
}

/**
 * After every chunk: foreign keys' targets outside the relations read named, every key's target columns named
 * (reading the few tables outside the relations read), and incoming keys given to their tables in order.
 */
export async function finishForeignKeys(session: DbSession, read: IntrospectState): Promise<void> {
  const targets = [...new Set(read.outside.map((o) => o.oid))];
  if (targets.length > 0) {
    const named = new Map<string, [string, string]>();
    for (const [oid, schema, name] of await textRows<[string, string, string]>(session, RELATION_NAMES_SQL, [targets]))
      named.set(oid, [read.strings.of(schema), name]);
    for (const o of read.outside) [o.references.schema, o.references.table] = named.get(o.oid) ?? ['?', '?'];
  }
  const outside = [...new Set(read.pending.map((p) => p.oid).filter((oid) => !read.columnNames.has(oid)))];
  if (outside.length > 0) {
    const rows = await session.query<{ oid: string; num: number; name: string }>(COLUMN_NAMES_SQL, [outside]);
    for (const r of rows.rows) {
      let names = read.columnNames.get(r.oid);
      if (!names) read.columnNames.set(r.oid, (names = []));
      names[r.num] = read.strings.of(r.name);
    }
  }
  for (const p of read.pending) {
    const names = read.columnNames.get(p.oid);
    p.owner.columns = read.nameLists.of(p.nums.map((n) => names?.[n] ?? `#${n}`));
  }
  // In order per target: most tables are pointed to by one key or none, so only the few lists of several are sorted.
  const byTarget = new Map<TableInfo, (typeof read.incoming)[number][]>();
  for (const incoming of read.incoming) {
    const list = byTarget.get(incoming.target);
    if (list) list.push(incoming);
    else byTarget.set(incoming.target, [incoming]);
  }
  const order = (a: [string, string, string], b: [string, string, string]) =>
    byCodePoint(a[0], b[0]) || byCodePoint(a[1], b[1]) || byCodePoint(a[2], b[2]);
  for (const [target, list] of byTarget) {
    if (list.length > 1) list.sort((a, b) => order(a.key, b.key));
    target.referencedBy = list.map((i) => i.entry);
  }
}

async function readIndexes(
  session: DbSession,
  chunk: ChunkParams,
  state: IntrospectState,
  tables: ReadonlyMap<string, ChunkTable>,
): Promise<void> {
  const rows = await textRows<IndexRow>(session, indexesSql(state.nullsNotDistinct), chunk);
  const unwritten: { index: { definition: string }; oid: string }[] = [];
  for (const [oid, name, unique, primary, indexOid, am, amOid, keys, classes, collations, definition] of rows) {
    const table = state.byOid.get(oid);
    if (!table) continue;
    const index = { name, unique: unique === 't', primary: primary === 't', definition: definition ?? '' };
    if (definition === null) {
      const written = plainIndexDefinition(
        state.naming,
        {
          name: index.name,
          unique: index.unique,
          schema: table.schema,
          table: table.name,
          am,
          amOid,
          keys,
          classes,
          collations,
        },
        (n) => {
          const shape = tables.get(oid)?.shape;
          const name = shape?.names[n];
          return shape && name !== undefined
            ? { name, typeOid: shape.types[n] ?? '', collation: shape.collations[n] ?? '' }
            : undefined;
        },
      );
      if (written === undefined) unwritten.push({ index, oid: indexOid });
      else index.definition = written;
    }
    table.indexes.push(index);
  }
  if (unwritten.length > 0) {
    const texts = await session.queryText(INDEX_DEFINITIONS_SQL, [unwritten.map((u) => u.oid)]);
    unwritten.forEach((u, i) => (u.index.definition = texts.rows[i]?.[0] ?? ''));
  }
}

/** String literals of a CHECK constraint (`status = ANY (ARRAY['paid'::text, ...])`), given to the columns it names. */
function attachCheckLiterals(table: TableInfo, columns: readonly string[], definition: string | null): void {
  if (!definition) return;
  const literals = [...definition.matchAll(/'((?:[^']|'')*)'/g)]
    .map((m) => (m[1] ?? '').replaceAll("''", "'"))
    .filter((v) => v.trim() !== '');
  if (literals.length === 0) return;
  for (const name of columns) {
    const at = table.columns.findIndex((c) => c.name === name);
    const column = at < 0 ? undefined : ownColumns(table)[at];
    if (!column) continue;
    column.allowedValues = [...new Set([...(column.allowedValues ?? []), ...literals])].slice(0, MAX_ALLOWED_VALUES);
  }
}

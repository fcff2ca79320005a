/**
 * One schema's tables in the cache's compact form: a table directory first, then each table as a JSON array
 * (positions instead of keys; types and defaults as numbers into the directory's string table). A reader of
 * one table reads the directory and that table's bytes; a reader of the schema parses the body in one go.
 *
 *   u32 LE  length D of the directory
 *   D bytes directory JSON: { n: table names, e: end offset of each table in the body, s: strings,
 *           c: column lists used by several tables (a multi-tenant schema's tables share a few), which a
 *           table names by number instead of holding them }
 *   body    the tables' JSON arrays joined by ","
 */
import type { ColumnInfo, ForeignKeyInfo, ReferentialAction, RelationKind, TableInfo } from '../../shared/schema';
import { freezeColumns, NameLists } from './sharedColumns';

export interface BlobDirectory {
  /** Table names, in the order of the body. */
  n: string[];
  /** Where each table's JSON ends in the body (exclusive); the next one starts one byte later (after ","). */
  e: number[];
  /** Types and defaults, each once. */
  s: string[];
  /** Packed column lists shared by several tables (a table's columns field is then the number of one). */
  c?: Packed[][];
}

const KINDS: RelationKind[] = ['table', 'partitioned_table', 'view', 'materialized_view', 'foreign_table'];
const ACTIONS: ReferentialAction[] = ['NO ACTION', 'RESTRICT', 'CASCADE', 'SET NULL', 'SET DEFAULT'];
/** Stands for "<schema>.<table>" inside index and trigger definitions (PostgreSQL text never holds NUL). */
const SELF = '\u0000';

type Packed = unknown[];

const NONE: readonly never[] = Object.freeze([]);

/** Encodes one schema's tables (all of the same schema). */
export function encodeSchema(schema: string, tables: readonly TableInfo[]): Buffer {
  const strings: string[] = [];
  const stringIds = new Map<string, number>();
  const id = (value: string | null): number => {
    if (value === null) return -1;
    let known = stringIds.get(value);
    if (known === undefined) {
      known = strings.length;
      strings.push(value);
      stringIds.set(value, known);
    }
    return known;
  };
  const packed = tables.map((t) => packTable(schema, t, id));
  // Column lists that several tables have go to the directory once.
  const lists = packed.map((p) => JSON.stringify(p[4]));
  const uses = new Map<string, number>();
  for (const list of lists) uses.set(list, (uses.get(list) ?? 0) + 1);
  const shared: Packed[][] = [];
  const sharedIds = new Map<string, number>();
  packed.forEach((p, i) => {
    const list = lists[i] ?? '';
    if ((uses.get(list) ?? 0) < 2) return;
    let at = sharedIds.get(list);
    if (at === undefined) {
      at = shared.length;
      shared.push(p[4] as Packed[]);
      sharedIds.set(list, at);
    }
    p[4] = at;
  });
  const parts: string[] = [];
  const ends: number[] = [];
  let offset = 0;
  for (const p of packed) {
    const text = JSON.stringify(p);
    offset += Buffer.byteLength(text) + (parts.length > 0 ? 1 : 0);
    ends.push(offset);
    parts.push(text);
  }
  const directory = Buffer.from(
    JSON.stringify({ n: tables.map((t) => t.name), e: ends, s: strings, ...(shared.length > 0 ? { c: shared } : {}) }),
  );
  const head = Buffer.alloc(4);
  head.writeUInt32LE(directory.length, 0);
  return Buffer.concat([head, directory, Buffer.from(parts.join(','))]);
}

/** The bytes before the body: 4 + the directory's length. */
export function bodyStart(directoryLength: number): number {
  return 4 + directoryLength;
}

/** Every table of a blob. */
export function decodeSchema(schema: string, blob: Buffer): TableInfo[] {
  const length = blob.readUInt32LE(0);
  const directory = JSON.parse(blob.subarray(4, 4 + length).toString('utf8')) as BlobDirectory;
  const packed = JSON.parse(`[${blob.subarray(4 + length).toString('utf8')}]`) as Packed[];
  const lists = new SharedLists(directory);
  return packed.map((p) => unpackTable(schema, p, directory.s, lists));
}

/** Where a table's JSON lies in the body, or undefined when the schema has no such table. */
export function tableRange(directory: BlobDirectory, name: string): { start: number; end: number } | undefined {
  const i = directory.n.indexOf(name);
  if (i < 0) return undefined;
  return { start: i === 0 ? 0 : (directory.e[i - 1] ?? 0) + 1, end: directory.e[i] ?? 0 };
}

export function decodeTable(schema: string, json: Buffer, directory: BlobDirectory): TableInfo {
  return unpackTable(schema, JSON.parse(json.toString('utf8')) as Packed, directory.s, new SharedLists(directory));
}

/** The directory's shared column lists, each unpacked once, frozen, and shared by the tables that have it. */
class SharedLists {
  private readonly unpacked = new Map<number, ColumnInfo[]>();
  /** Lists of column names (keys, foreign keys' columns), one frozen copy of each. */
  readonly names = new NameLists();
  constructor(private readonly directory: BlobDirectory) {}

  /** A list of names as held by every table that has it; an empty list is one frozen list. */
  nameList(list: string[] | null): string[] | null {
    return list === null ? null : this.names.of(list);
  }

  /** One frozen empty list for every table without unique constraints or triggers. */
  static none<T>(list: T[]): T[] {
    return list.length === 0 ? (NONE as unknown as T[]) : list;
  }

  columns(field: unknown): ColumnInfo[] {
    if (Array.isArray(field)) return (field as Packed[]).map((c) => unpackColumn(c, this.directory.s));
    const at = field as number;
    let list = this.unpacked.get(at);
    if (!list) {
      // Frozen (sharedColumns.ts): the contract's type stays, a write throws.
      list = freezeColumns(
        (this.directory.c?.[at] ?? []).map((c) => unpackColumn(c, this.directory.s)),
      ) as ColumnInfo[];
      this.unpacked.set(at, list);
    }
    return list;
  }
}

function packTable(schema: string, t: TableInfo, id: (value: string | null) => number): Packed {
  const self = `${schema}.${t.name}`;
  const template = (definition: string) => definition.replaceAll(self, SELF);
  return [
    t.name,
    KINDS.indexOf(t.kind),
    t.comment,
    t.rowEstimate,
    t.columns.map((c) => packColumn(c, id)),
    t.primaryKey,
    t.uniqueConstraints,
    t.foreignKeys.map((f) => [
      f.name,
      f.columns,
      f.references.schema,
      f.references.table,
      f.references.columns,
      ACTIONS.indexOf(f.onDelete),
      ACTIONS.indexOf(f.onUpdate),
    ]),
    t.indexes.map((i) => [i.name, i.unique ? 1 : 0, i.primary ? 1 : 0, template(i.definition)]),
    t.triggers.map((g) => [g.name, g.enabled ? 1 : 0, template(g.definition)]),
    t.partitionOf ? [t.partitionOf.schema, t.partitionOf.table] : null,
    ...(t.referencedBy ? [t.referencedBy.map((f) => [f.schema, f.table, f.columns, ACTIONS.indexOf(f.onDelete)])] : []),
  ];
}

function packColumn(c: ColumnInfo, id: (value: string | null) => number): Packed {
  const packed: Packed = [c.name, id(c.type), c.nullable ? 1 : 0, id(c.default), c.comment];
  const extras = [c.allowedValues, c.valueWords, c.samples];
  let last = extras.length - 1;
  while (last >= 0 && extras[last] === undefined) last--;
  for (let i = 0; i <= last; i++) packed.push(extras[i] ?? null);
  return packed;
}

function unpackTable(schema: string, p: Packed, strings: readonly string[], lists: SharedLists): TableInfo {
  const name = p[0] as string;
  const self = `${schema}.${name}`;
  const untemplate = (definition: string) => definition.replaceAll(SELF, self);
  const partition = p[10] as [string, string] | null;
  const incoming = p[11] as Packed[] | undefined;
  return {
    schema,
    name,
    kind: KINDS[p[1] as number] ?? 'table',
    comment: p[2] as string | null,
    ...(partition ? { partitionOf: { schema: partition[0], table: partition[1] } } : {}),
    rowEstimate: p[3] as number | null,
    columns: lists.columns(p[4]),
    primaryKey: lists.nameList(p[5] as string[] | null),
    uniqueConstraints: SharedLists.none((p[6] as string[][]).map((u) => lists.names.of(u))),
    foreignKeys: (p[7] as Packed[]).map((f): ForeignKeyInfo => ({
      name: f[0] as string,
      columns: lists.names.of(f[1] as string[]),
      references: { schema: f[2] as string, table: f[3] as string, columns: lists.names.of(f[4] as string[]) },
      onDelete: ACTIONS[f[5] as number] ?? 'NO ACTION',
      onUpdate: ACTIONS[f[6] as number] ?? 'NO ACTION',
    })),
    indexes: (p[8] as Packed[]).map((i) => ({
      name: i[0] as string,
      unique: i[1] === 1,
      primary: i[2] === 1,
      definition: untemplate(i[3] as string),
    })),
    triggers: SharedLists.none(
      (p[9] as Packed[]).map((g) => ({
        name: g[0] as string,
        enabled: g[1] === 1,
        definition: untemplate(g[2] as string),
      })),
    ),
    ...(incoming
      ? {
          referencedBy: incoming.map((f) => ({
            schema: f[0] as string,
            table: f[1] as string,
            columns: lists.names.of(f[2] as string[]),
            onDelete: ACTIONS[f[3] as number] ?? 'NO ACTION',
          })),
        }
      : {}),
  };
}

function unpackColumn(c: Packed, strings: readonly string[]): ColumnInfo {
  const column: ColumnInfo = {
    name: c[0] as string,
    type: strings[c[1] as number] ?? '',
    nullable: c[2] === 1,
    default: (c[3] as number) < 0 ? null : (strings[c[3] as number] ?? null),
    comment: c[4] as string | null,
  };
  if (c[5] != null) column.allowedValues = c[5] as string[];
  if (c[6] != null) column.valueWords = c[6] as string[];
  if (c[7] != null) column.samples = c[7] as string[];
  return column;
}

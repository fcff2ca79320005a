/**
 * One schema's tables in the cache's form: a table directory first, then each table as its own JSON (the
 * snapshot's keys, in the snapshot's order), so that decoding a schema is one native JSON.parse giving the
 * tables themselves, nothing to unpack after it. A column list several tables have (a multi-tenant schema's
 * tables share a few) is kept once, in the directory, and a table's `columns` names it by number; decoded, those
 * tables share one frozen list (sharedColumns.ts). A reader of one table reads the directory and that table's
 * bytes; a reader of the schema parses the body in one go.
 *
 *   u32 LE  length D of the directory
 *   D bytes directory JSON: { n: table names, e: end offset of each table in the body, c: shared column lists }
 *   body    the tables' JSON joined by ","
 */
import type { ColumnInfo, TableInfo } from '../../shared/schema';
import { freezeColumns } from './sharedColumns';

export interface BlobDirectory {
  /** Table names, in the order of the body. */
  n: string[];
  /** Where each table's JSON ends in the body (exclusive); the next one starts one byte later (after ","). */
  e: number[];
  /** Column lists shared by several tables (a table's `columns` is then the number of one). */
  c?: ColumnInfo[][];
}

/** A table as stored: its columns, or the number of a shared list. */
type StoredTable = Omit<TableInfo, 'columns'> & { columns: ColumnInfo[] | number };

/** Encodes one schema's tables (all of the same schema). */
export function encodeSchema(schema: string, tables: readonly TableInfo[]): Buffer {
  // Column lists as text, once per list object (introspection hands tables of the same columns one list).
  const texts = new Map<ColumnInfo[], string>();
  const textOf = (list: ColumnInfo[]): string => {
    let text = texts.get(list);
    if (text === undefined) texts.set(list, (text = JSON.stringify(list)));
    return text;
  };
  const uses = new Map<string, number>();
  for (const t of tables) uses.set(textOf(t.columns), (uses.get(textOf(t.columns)) ?? 0) + 1);
  const shared: string[] = [];
  const sharedIds = new Map<string, number>();
  const parts: string[] = [];
  const ends: number[] = [];
  let offset = 0;
  for (const t of tables) {
    if (t.schema !== schema) throw new Error(`table ${t.schema}.${t.name} encoded with schema ${schema}`);
    const list = textOf(t.columns);
    let at: number | undefined;
    if ((uses.get(list) ?? 0) >= 2) {
      at = sharedIds.get(list);
      if (at === undefined) {
        at = shared.length;
        shared.push(list);
        sharedIds.set(list, at);
      }
    }
    // The spread keeps every key where it was: `columns` only changes its value.
    const text = JSON.stringify(at === undefined ? t : ({ ...t, columns: at } satisfies StoredTable));
    offset += Buffer.byteLength(text) + (parts.length > 0 ? 1 : 0);
    ends.push(offset);
    parts.push(text);
  }
  const names = JSON.stringify(tables.map((t) => t.name));
  const directory = Buffer.from(
    `{"n":${names},"e":${JSON.stringify(ends)}${shared.length > 0 ? `,"c":[${shared.join(',')}]` : ''}}`,
  );
  const head = Buffer.alloc(4);
  head.writeUInt32LE(directory.length, 0);
  return Buffer.concat([head, directory, Buffer.from(parts.join(','))]);
}

/** The bytes before the body: 4 + the directory's length. */
export function bodyStart(directoryLength: number): number {
  return 4 + directoryLength;
}

/** Every table of a blob (`_schema`: its schema, which each table names itself). */
export function decodeSchema(_schema: string, blob: Buffer): TableInfo[] {
  const length = blob.readUInt32LE(0);
  const directory = JSON.parse(blob.subarray(4, 4 + length).toString('utf8')) as BlobDirectory;
  const tables = JSON.parse(`[${blob.subarray(4 + length).toString('utf8')}]`) as StoredTable[];
  const lists = new SharedLists(directory);
  return tables.map((t) => lists.attach(t));
}

/** Where a table's JSON lies in the body, or undefined when the schema has no such table. */
export function tableRange(directory: BlobDirectory, name: string): { start: number; end: number } | undefined {
  const i = directory.n.indexOf(name);
  if (i < 0) return undefined;
  return { start: i === 0 ? 0 : (directory.e[i - 1] ?? 0) + 1, end: directory.e[i] ?? 0 };
}

export function decodeTable(_schema: string, json: Buffer, directory: BlobDirectory): TableInfo {
  return new SharedLists(directory).attach(JSON.parse(json.toString('utf8')) as StoredTable);
}

/** The directory's shared column lists, each frozen once and given to the tables that name it. */
class SharedLists {
  private readonly frozen = new Map<number, ColumnInfo[]>();
  constructor(private readonly directory: BlobDirectory) {}

  attach(stored: StoredTable): TableInfo {
    if (typeof stored.columns === 'number') stored.columns = this.list(stored.columns);
    return stored as TableInfo;
  }

  private list(at: number): ColumnInfo[] {
    let list = this.frozen.get(at);
    if (!list) {
      // Frozen: the contract's type stays, a write throws instead of reaching the other tables.
      list = freezeColumns(this.directory.c?.[at] ?? []) as ColumnInfo[];
      this.frozen.set(at, list);
    }
    return list;
  }
}

/**
 * One table from a schema's blob by byte ranges (what a fresh process answering describe_table or
 * `pg-agent schema --table` reads): the blob's table directory (kept per schema once read), then that table's
 * bytes, never the rest of the blob.
 */
import type { TableInfo } from '../../shared/schema';
import { decodeTable, tableRange, type BlobDirectory } from './schemaBlob';
import type { SchemaBlobStore, SchemaEntry } from './schemaCacheStore';

/** The directories read so far, per schema, with where the blob's body starts. */
export type Directories = Map<string, { directory: BlobDirectory; bodyAt: number }>;

/** The table; null: the schema has no such table; undefined: the blob is gone from this store. */
export async function readTable(
  store: SchemaBlobStore,
  directories: Directories,
  schema: string,
  entry: SchemaEntry,
  name: string,
): Promise<TableInfo | null | undefined> {
  const read = await readDirectory(store, directories, schema, entry);
  if (!read) return undefined;
  const { directory, bodyAt } = read;
  const blob = entry.blob;
  const range = tableRange(directory, name);
  if (!range) return null;
  const bytes = await store.range(blob, bodyAt + range.start, bodyAt + range.end);
  return bytes ? decodeTable(schema, bytes, directory) : undefined;
}

/** A schema's table directory (its table names, in the blob's order), read once per schema; undefined: the blob is gone. */
export async function readDirectory(
  store: SchemaBlobStore,
  directories: Directories,
  schema: string,
  entry: SchemaEntry,
): Promise<{ directory: BlobDirectory; bodyAt: number } | undefined> {
  const known = directories.get(schema);
  if (known) return known;
  const text = await store.range(entry.blob, 4, 4 + entry.directory);
  if (!text || text.length !== entry.directory) return undefined;
  const read = { directory: JSON.parse(text.toString('utf8')) as BlobDirectory, bodyAt: 4 + entry.directory };
  directories.set(schema, read);
  return read;
}

/**
 * A schema's table names: from its decoded tables when held, else from its directory (each store in turn), else
 * (no store has its blob) from `decode`.
 */
export async function directoryNames(
  stores: readonly SchemaBlobStore[],
  held: { decoded: Map<string, TableInfo[]>; directories: Directories },
  schema: string,
  entry: SchemaEntry,
  decode: () => Promise<string[]>,
): Promise<string[]> {
  const decoded = held.decoded.get(schema);
  if (decoded) return decoded.map((t) => t.name);
  for (const store of stores) {
    const read = await readDirectory(store, held.directories, schema, entry).catch(() => undefined);
    if (read) return read.directory.n;
  }
  return decode();
}

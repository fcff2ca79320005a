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
  const blob = entry.blob;
  let { directory, bodyAt } = directories.get(schema) ?? { directory: undefined, bodyAt: 0 };
  if (!directory) {
    const text = await store.range(blob, 4, 4 + entry.directory);
    if (!text || text.length !== entry.directory) return undefined;
    directory = JSON.parse(text.toString('utf8')) as BlobDirectory;
    bodyAt = 4 + entry.directory;
    directories.set(schema, { directory, bodyAt });
  }
  const range = tableRange(directory, name);
  if (!range) return null;
  const bytes = await store.range(blob, bodyAt + range.start, bodyAt + range.end);
  return bytes ? decodeTable(schema, bytes, directory) : undefined;
}

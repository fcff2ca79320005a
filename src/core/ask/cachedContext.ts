/**
 * `context` over the schema cache without building the linking index each time (seconds at 50,000 tables): the
 * index is stored beside the schemas it was built from (keyed by their content and by this build of the code),
 * and a process loads it, decodes only the schemas holding its entries' tables (one per tenant group) and those
 * a question is shown in, and ranks exactly as over a built index. The first process after a schema change
 * builds it from the whole schema and stores it.
 */
import { statSync } from 'node:fs';
import type { SchemaSnapshot } from '../../shared/schema';
import type { Db } from '../db/db';
import type { ConfirmedCache, SchemaCache } from '../db/schemaCache';
import {
  decodeLinkIndex,
  encodeLinkIndex,
  entrySchemas,
  fillGroupTables,
  LINK_INDEX_FORMAT,
  type StoredLinkIndex,
} from './linkIndexCodec';
import type { SchemaIndex } from './linking/schemaIndex';
import { indexOf } from './linking/schemaIndex';
import type { SchemaContext, SchemaContextOptions } from './schemaContext';
import { buildSchemaContext, schemaContextFromIndex, schemaTokensOf } from './schemaContext';

export async function cachedSchemaContext(
  cache: SchemaCache,
  db: Db,
  connectionKey: string,
  question: string,
  options: SchemaContextOptions,
): Promise<SchemaContext> {
  const confirmed = await cache.confirmed(db, connectionKey);
  const name = `link-${confirmed.contentId}-${LINK_INDEX_FORMAT}${codeTag()}`;
  const index = await loadIndex(confirmed, name);
  if (index) {
    return schemaContextFromIndex(index, question, options, async (ranked) => {
      const shown = new Set(ranked.flatMap((c) => (c.schema && c.schema !== c.entry.table.schema ? [c.schema] : [])));
      for (const schema of shown) fillGroupTables(index, schema, await confirmed.tablesOf(schema));
    });
  }
  const tables = [];
  for (const schema of confirmed.schemas) tables.push(...(await confirmed.tablesOf(schema)));
  const snapshot: SchemaSnapshot = { database: '', serverVersion: '', tables };
  const built = indexOf(snapshot);
  schemaTokensOf(built);
  await confirmed.writeDerived(name, Buffer.from(JSON.stringify(encodeLinkIndex(built))));
  return buildSchemaContext(snapshot, question, options);
}

/** The stored index with its entries' tables, or undefined (none stored, unreadable, or of another shape). */
async function loadIndex(confirmed: ConfirmedCache, name: string): Promise<SchemaIndex | undefined> {
  const data = await confirmed.readDerived(name);
  if (!data) return undefined;
  let stored: StoredLinkIndex;
  try {
    stored = JSON.parse(data.toString('utf8')) as StoredLinkIndex;
  } catch {
    return undefined;
  }
  if (stored.format !== LINK_INDEX_FORMAT || !Array.isArray(stored.entries)) return undefined;
  const bySchema = new Map<string, Map<string, SchemaSnapshot['tables'][number]>>();
  for (const schema of entrySchemas(stored)) {
    bySchema.set(schema, new Map((await confirmed.tablesOf(schema)).map((t) => [t.name, t])));
  }
  return decodeLinkIndex(stored, (schema, table) => bySchema.get(schema)?.get(table));
}

/**
 * This build of the code (its bundle's size and time): an index stored by another build, whose ranking may hold
 * other terms, is not used.
 */
function codeTag(): string {
  try {
    const info = statSync(typeof __filename === 'string' ? __filename : (process.argv[1] ?? ''));
    return `-${info.size.toString(36)}${Math.floor(info.mtimeMs).toString(36)}`;
  } catch {
    return '';
  }
}

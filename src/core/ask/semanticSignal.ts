/**
 * Meaning, not only spelling (issue 14): each table (a family as one) is described in a line a person
 * would write — its name, comment and columns — and embedded once (EmbeddingCache, keyed by the text, so a
 * schema change re-embeds only what changed); each question is embedded and compared with every table.
 * The similarities are one more signal of the ranking (schemaContext.ts, `semantic`); when the model
 * cannot be reached or answers garbage, the ranking goes on by words and the log says why.
 */
import type { SchemaSnapshot } from '../../shared/schema';
import type { EmbeddingCache } from '../llm/embeddingCache';
import { cosine } from '../llm/embeddings';
import type { Logger } from '../platform/logger';
import { toAgentError } from '../platform/errors';
import type { TableEntry } from './linking/schemaIndex';
import { displayName, indexOf } from './linking/schemaIndex';

const DESCRIBED_COLUMNS = 40;

/** "orders: customer orders; columns: id, customer id, total amount, status -- paid or not, ...". */
export function tableDescription(entry: TableEntry): string {
  const { table } = entry;
  const words = (name: string) =>
    name
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/[_\s]+/g, ' ')
      .trim();
  const columns = table.columns
    .slice(0, DESCRIBED_COLUMNS)
    .map((c) => `${words(c.name)}${c.comment ? ` (${c.comment.replace(/\s+/g, ' ').slice(0, 80)})` : ''}`);
  return `${words(displayName(table.schema, table.name))}${table.comment ? `: ${table.comment.replace(/\s+/g, ' ').slice(0, 200)}` : ''}; columns: ${columns.join(', ')}`;
}

/** Snapshots are immutable: their tables are described once, not at every question. */
const descriptions = new WeakMap<SchemaSnapshot, string[]>();

function descriptionsOf(snapshot: SchemaSnapshot): string[] {
  let texts = descriptions.get(snapshot);
  if (!texts) descriptions.set(snapshot, (texts = indexOf(snapshot).entries.map(tableDescription)));
  return texts;
}

/** Entry key ("schema.table") → cosine similarity to the question; undefined when embeddings failed. */
export async function semanticScores(
  snapshot: SchemaSnapshot,
  question: string,
  cache: EmbeddingCache,
  logger: Logger,
  signal?: AbortSignal,
): Promise<ReadonlyMap<string, number> | undefined> {
  const { entries } = indexOf(snapshot);
  try {
    const [tables, [asked]] = await Promise.all([
      cache.vectorsFor(descriptionsOf(snapshot), 'document', signal),
      cache.vectorsFor([question], 'query', signal),
    ]);
    if (!asked) return undefined;
    const scores = new Map<string, number>();
    entries.forEach((entry, i) => {
      const vector = tables[i];
      if (vector && vector.length === asked.length) scores.set(entry.key, cosine(asked, vector));
    });
    return scores;
  } catch (error) {
    if (signal?.aborted) throw error;
    logger.warn('embeddings are not available for this question; the schema is ranked by words only', {
      model: cache.embedder.model,
      error: toAgentError(error).message,
    });
    return undefined;
  }
}

/**
 * Ranked search for the review chat's research tier: BM25 over chunks of the job's text files (markdown
 * sections, YAML list items, line windows of SQL and other text) and of the database schema (one chunk
 * per table). Words are matched after a light normalisation: snake_case and camelCase split, lower case,
 * English plurals folded ("order_items" finds "order item"); with an embedding model, vector_search ranks
 * the same chunks by meaning (rankByMeaning).
 */
import type { SchemaSnapshot } from '../../shared/schema';
import type { EmbeddingCache } from '../llm/embeddingCache';
import { cosine } from '../llm/embeddings';

export interface SearchChunk {
  /** Where the chunk comes from, for the model to cite: "plan.md § Steps (lines 5-12)", "schema: public.orders". */
  source: string;
  /** Words that name the chunk (heading, table name); they count twice. */
  title: string;
  text: string;
}

export interface RankedHit {
  chunk: SearchChunk;
  score: number;
}

const STOPWORDS = new Set(
  'a an and are as at be by do does for from has have how i if in is it its of on or that the this to was were what when where which who why will with'.split(
    ' ',
  ),
);
const WINDOW_LINES = 40;
const MAX_SECTION_LINES = 60;

/** English plural to singular, roughly: enough to match "tables"/"table", "indexes"/"index", "categories"/"category". */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (/(?:x|ch|sh|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('ss') || word.endsWith('us') || word.endsWith('is')) return word;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1 && !STOPWORDS.has(word))
    .map(stem);
}

function lineRange(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}-${end}`;
}

function windows(path: string, lines: readonly string[], offset: number, label: string, title: string): SearchChunk[] {
  const chunks: SearchChunk[] = [];
  for (let i = 0; i < lines.length; i += WINDOW_LINES) {
    const part = lines.slice(i, i + WINDOW_LINES);
    if (part.join('').trim() === '') continue;
    const first = offset + i + 1;
    chunks.push({
      source: `${path}${label} (${lineRange(first, first + part.length - 1)})`,
      title,
      text: part.join('\n'),
    });
  }
  return chunks;
}

function markdownChunks(path: string, lines: readonly string[]): SearchChunk[] {
  const chunks: SearchChunk[] = [];
  const trail: string[] = [];
  let start = 0;
  const flush = (end: number) => {
    const body = lines.slice(start, end);
    if (body.join('').trim() === '') return;
    const title = trail.filter(Boolean).join(' › ');
    const label = title ? ` § ${title}` : '';
    if (body.length > MAX_SECTION_LINES) chunks.push(...windows(path, body, start, label, title));
    else chunks.push({ source: `${path}${label} (${lineRange(start + 1, end)})`, title, text: body.join('\n') });
  };
  lines.forEach((line, i) => {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!heading) return;
    flush(i);
    const level = heading[1]?.length ?? 1;
    trail.length = level - 1;
    trail[level - 1] = (heading[2] ?? '').trim();
    start = i;
  });
  flush(lines.length);
  return chunks;
}

function yamlChunks(path: string, lines: readonly string[]): SearchChunk[] {
  const starts = lines.flatMap((line, i) => (/^(?:- |-$|[A-Za-z_][\w.-]*:)/.test(line) ? [i] : []));
  if (starts.length === 0) return windows(path, lines, 0, '', '');
  const chunks: SearchChunk[] = [];
  starts.forEach((start, k) => {
    const end = starts[k + 1] ?? lines.length;
    const body = lines.slice(start, end);
    if (body.join('').trim() === '') return;
    const id = /^-?\s*(?:id|name):\s*(.+)$/m
      .exec(body.join('\n'))?.[1]
      ?.trim()
      .replace(/^["']|["']$/g, '');
    const title = id ?? '';
    chunks.push({
      source: `${path}${id ? ` item ${id}` : ''} (${lineRange(start + 1, end)})`,
      title,
      text: body.join('\n'),
    });
  });
  return chunks;
}

/** A job file as chunks: markdown by section, YAML by top-level item, anything else by line windows. */
export function chunkFile(path: string, text: string): SearchChunk[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (/\.(?:md|markdown)$/i.test(path)) return markdownChunks(path, lines);
  if (/\.ya?ml$/i.test(path)) return yamlChunks(path, lines);
  return windows(path, lines, 0, '', path.split('/').pop() ?? '');
}

/** One chunk per table: name, kind, comment, columns with types and comments, foreign keys. */
export function chunkSchema(snapshot: SchemaSnapshot): SearchChunk[] {
  return snapshot.tables.map((table) => {
    const name = `${table.schema}.${table.name}`;
    const lines = [
      `${table.kind} ${name}${table.rowEstimate !== null ? ` (~${table.rowEstimate} rows)` : ''}${table.comment ? `: ${table.comment}` : ''}`,
      ...table.columns.map(
        (c) => `  ${c.name} ${c.type}${c.nullable ? '' : ' not null'}${c.comment ? ` -- ${c.comment}` : ''}`,
      ),
      ...table.foreignKeys.map(
        (fk) =>
          `  (${fk.columns.join(', ')}) references ${fk.references.schema}.${fk.references.table} (${fk.references.columns.join(', ')}) on delete ${fk.onDelete.toLowerCase()}`,
      ),
    ];
    return { source: `schema: ${name}`, title: table.name, text: lines.join('\n') };
  });
}

/** The best chunks for a query by BM25 (k1 1.2, b 0.75); chunks sharing no word with the query are left out. */
export function rankChunks(chunks: readonly SearchChunk[], query: string, limit: number): RankedHit[] {
  const terms = [...new Set(tokenize(query))];
  if (terms.length === 0 || chunks.length === 0) return [];
  const docs = chunks.map((chunk) => {
    const tokens = [...tokenize(chunk.title), ...tokenize(chunk.title), ...tokenize(chunk.text)];
    const tf = new Map<string, number>();
    for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1);
    return { chunk, tf, length: tokens.length };
  });
  const averageLength = docs.reduce((sum, d) => sum + d.length, 0) / docs.length || 1;
  const df = new Map(terms.map((term) => [term, docs.filter((d) => d.tf.has(term)).length]));
  const k1 = 1.2;
  const b = 0.75;
  const scored = docs.map((doc) => {
    let score = 0;
    for (const term of terms) {
      const freq = doc.tf.get(term) ?? 0;
      if (freq === 0) continue;
      const n = df.get(term) ?? 0;
      const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
      score += (idf * freq * (k1 + 1)) / (freq + k1 * (1 - b + (b * doc.length) / averageLength));
    }
    return { chunk: doc.chunk, score };
  });
  return scored
    .filter((hit) => hit.score > 0)
    .sort((x, y) => y.score - x.score || x.chunk.source.localeCompare(y.chunk.source))
    .slice(0, limit);
}

/** The text a chunk is embedded by: where it comes from, its title and its text. */
export function chunkDocument(chunk: SearchChunk): string {
  return `${chunk.source}\n${chunk.title}\n${chunk.text}`.slice(0, 4000);
}

/** The chunks closest in meaning to the query (cosine of embeddings), best first; only new chunks are embedded. */
export async function rankByMeaning(
  cache: EmbeddingCache,
  chunks: readonly SearchChunk[],
  query: string,
  limit: number,
): Promise<RankedHit[]> {
  if (chunks.length === 0) return [];
  const [vectors, [asked]] = await Promise.all([
    cache.vectorsFor(chunks.map(chunkDocument), 'document'),
    cache.vectorsFor([query], 'query'),
  ]);
  if (!asked) return [];
  return chunks
    .map((chunk, i) => ({ chunk, score: cosine(asked, vectors[i] ?? new Float32Array(0)) }))
    .filter((hit) => hit.score > 0)
    .sort((x, y) => y.score - x.score || x.chunk.source.localeCompare(y.chunk.source))
    .slice(0, limit);
}

/**
 * The schema context of a question: the tables and columns a language model is shown, ranked by
 * relevance to the question and cut to a token budget, so that context stays bounded on any schema size.
 */
import { AgentError } from '../platform/errors';
import type { ColumnInfo, SchemaSnapshot } from '../../shared/schema';
import type { Candidate } from './linking/ranking';
import { pinnedEntries, rank } from './linking/ranking';
import type { SchemaIndex, TableEntry } from './linking/schemaIndex';
import { indexOf } from './linking/schemaIndex';
import { entryInSchema, fullBlockOf, renderBlock } from './tableBlocks';
import { estimateTokens } from './tokens';

export interface RankedTable {
  schema: string;
  name: string;
  score: number;
  /** The columns included: all of them in table order when they fit, else the best ones, best first. */
  columns: string[];
  /** A family collapsed into this entry (same columns, numbered/dated suffix, or partitions): every member's name, this one included. */
  members?: string[];
  /** The same table in several schemas (a schema per tenant) shown once: every schema, `schema` first. */
  schemas?: string[];
}

export interface SchemaContext {
  /** Best first: exactly the tables whose blocks are in `text`. */
  tables: RankedTable[];
  /** estimateTokens(text); never more than `budget`. */
  tokens: number;
  budget: number;
  /** What the rendering of every table would have cost, by the same rule. */
  schemaTokens: number;
  /** What goes to the model: one block per table, e.g. `orders(id bigint pk, customer_id bigint → customers.id) -- comment`. */
  text: string;
}

export interface SchemaContextOptions {
  budgetTokens: number;
  /**
   * Extra sample values per column, keyed "schema.table.column", on top of the `samples` the snapshot's
   * columns carry when sampling is enabled (postgresAgent.schema.sampleValues / --samples). Sample values
   * are matched but never rendered into the text.
   */
  sampleValues?: Map<string, string[]>;
  /**
   * Tables a model picked from the compact list of the schema ("schema.table" or a bare name): they rank
   * first, and the tables joining them are pulled in. Unknown names are ignored.
   */
  pinned?: readonly string[];
  /**
   * Similarity of each entry ("schema.table" of the entry's table) to the question by meaning (cosine
   * of embeddings, semanticSignal.ts), when an embedding model is configured: one more signal, see below.
   */
  semantic?: ReadonlyMap<string, number>;
}

export function buildSchemaContext(
  snapshot: SchemaSnapshot,
  question: string,
  options: SchemaContextOptions,
): SchemaContext {
  const budget = options.budgetTokens;
  if (!Number.isSafeInteger(budget) || budget <= 0) {
    throw new AgentError('BAD_INPUT', `The context token budget must be a positive whole number, got ${budget}.`);
  }
  const index = indexOf(snapshot);
  const schemaTokens = schemaTokensOf(index);
  const ranked = rank(index, question, options, schemaTokens <= budget);
  return fit(ranked, budget, schemaTokens);
}

/** What the rendering of every entry costs (computed once per index, and stored with a stored one). */
export function schemaTokensOf(index: SchemaIndex): number {
  return (index.schemaTokens ??= estimateTokens(index.entries.map(fullBlockOf).join('\n')));
}

/**
 * buildSchemaContext on an index loaded rather than built (cachedContext.ts): `prepare` is given the ranked
 * candidates before they are fitted, to fill in the tables they are shown with.
 */
export async function schemaContextFromIndex(
  index: SchemaIndex,
  question: string,
  options: SchemaContextOptions,
  prepare: (ranked: readonly Candidate[]) => Promise<void>,
): Promise<SchemaContext> {
  const budget = options.budgetTokens;
  if (!Number.isSafeInteger(budget) || budget <= 0) {
    throw new AgentError('BAD_INPUT', `The context token budget must be a positive whole number, got ${budget}.`);
  }
  const schemaTokens = schemaTokensOf(index);
  const ranked = rank(index, question, options, schemaTokens <= budget);
  await prepare(ranked);
  return fit(ranked, budget, schemaTokens);
}

/** Entries (families collapsed), most relevant to `question` first; `all` keeps those it does not match too, last. */
export function rankedEntries(snapshot: SchemaSnapshot, question: string, all: boolean): readonly TableEntry[] {
  return rank(indexOf(snapshot), question, {}, all).map((c) => c.entry);
}

/**
 * The whole blocks of the named tables ("schema.table" or a bare name; a family member gives its family),
 * as the context renders them: what describe_table answers. Names that match no table come back in `unknown`.
 */
export function describeTables(
  snapshot: SchemaSnapshot,
  names: readonly string[],
): { blocks: string[]; tables: RankedTable[]; unknown: string[] } {
  const index = indexOf(snapshot);
  const blocks: string[] = [];
  const tables: RankedTable[] = [];
  const unknown: string[] = [];
  const seen = new Set<number>();
  for (const name of names) {
    const [e] = pinnedEntries(index, [name]);
    const entry = e === undefined ? undefined : index.entries[e];
    if (e === undefined || !entry) {
      unknown.push(name);
      continue;
    }
    if (seen.has(e)) continue;
    seen.add(e);
    blocks.push(fullBlockOf(entry));
    tables.push({ ...tableOf(entry), score: 0, columns: entry.table.columns.map((c) => c.name) });
  }
  return { blocks, tables, unknown };
}

/** Greedy by score: a table's whole block when it fits, else its key, matched and FK columns, else skipped. */
function fit(ranked: readonly Candidate[], budget: number, schemaTokens: number): SchemaContext {
  const maxChars = budget * 4; // estimateTokens(text) <= budget  ⇔  text.length <= 4 × budget
  const blocks: string[] = [];
  const tables: RankedTable[] = [];
  let used = 0;
  for (const candidate of ranked) {
    const room = maxChars - used - (blocks.length > 0 ? 1 : 0);
    if (room <= 0) break;
    const entry = entryInSchema(candidate.entry, candidate.schema);
    const { table } = entry;
    const full = entry === candidate.entry ? fullBlockOf(entry) : renderBlock(entry, table.columns, 0);
    let block: string | undefined;
    let columns: string[] = [];
    if (full.length <= room) {
      block = full;
      columns = table.columns.map((c) => c.name);
    } else {
      const order = columnPriority(entry, candidate.columnScores);
      for (let k = Math.min(order.essential, table.columns.length - 1); k >= 1 && block === undefined; k--) {
        const picked = order.columns.slice(0, k);
        const trimmed = renderBlock(entry, picked, table.columns.length - k);
        if (trimmed.length <= room) {
          block = trimmed;
          columns = picked.map((c) => c.name);
        }
      }
    }
    if (block === undefined) continue;
    used += block.length + (blocks.length > 0 ? 1 : 0);
    blocks.push(block);
    tables.push({ ...tableOf(entry), score: candidate.score, columns });
  }
  const text = blocks.join('\n');
  return { tables, tokens: estimateTokens(text), budget, schemaTokens, text };
}

/** An entry's name as the context lists it: its family members, and for a group its schemas (the shown one first). */
function tableOf(entry: TableEntry): Pick<RankedTable, 'schema' | 'name' | 'members' | 'schemas'> {
  const { table, members, schemas } = entry;
  return {
    schema: table.schema,
    name: table.name,
    ...(members ? { members } : {}),
    ...(schemas ? { schemas: [table.schema, ...schemas.filter((s) => s !== table.schema)] } : {}),
  };
}

/** Primary key, then columns the question matched (best first), then FK columns: the essential ones; then the rest. */
function columnPriority(
  entry: TableEntry,
  columnScores: ReadonlyMap<number, number>,
): { columns: ColumnInfo[]; essential: number } {
  const { table, fkColumns } = entry;
  const pk = new Set(table.primaryKey ?? []);
  const matched = [...columnScores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([c]) => c);
  const order: number[] = [];
  const seen = new Set<number>();
  const push = (c: number): void => {
    if (c >= 0 && !seen.has(c)) {
      seen.add(c);
      order.push(c);
    }
  };
  table.columns.forEach((c, i) => pk.has(c.name) && push(i));
  matched.forEach(push);
  table.columns.forEach((c, i) => fkColumns.has(c.name) && push(i));
  const essential = Math.max(1, order.length);
  table.columns.forEach((_, i) => push(i));
  return { columns: order.map((i) => table.columns[i]).filter((c): c is ColumnInfo => c !== undefined), essential };
}

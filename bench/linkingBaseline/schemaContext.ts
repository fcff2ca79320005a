/**
 * The schema context of a question: the tables and columns a language model is shown, ranked by
 * relevance to the question and cut to a token budget, so that context stays bounded on any schema size.
 */
import { AgentError } from '../../src/core/platform/errors';
import type { ColumnInfo, SchemaSnapshot } from '../../src/shared/schema';
import { MONEY_TERM, MONEY_WORDS } from './identifierWords';
import type { Field, Posting, SchemaIndex, TableEntry } from './schemaIndex';
import { indexOf, keyOf } from './schemaIndex';
import { fullBlockOf, renderBlock } from './tableBlocks';
import { estimateTokens, termOf, termsOf } from './tokens';

export interface RankedTable {
  schema: string;
  name: string;
  score: number;
  /** The columns included: all of them in table order when they fit, else the best ones, best first. */
  columns: string[];
  /** A family collapsed into this entry (same columns, numbered/dated suffix, or partitions): every member's name, this one included. */
  members?: string[];
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

/**
 * Scoring. Each question term scores once per table, in the best field it appears in, times its inverse
 * document frequency over tables (a term found in every table, like "date", counts little): table-name
 * term 4 > column name, allowed value (enum label, CHECK literal) 2 > a word of the column's statistics
 * 1.5 > comment 1 > sample value 0.5; a table whose name terms are all in the question adds 8 × the idf of
 * its name terms (exact ≫ token match). Adjacent question words also count joined ("high school" →
 * highschooler), and money words (revenue, sales, spend) match money-typed columns. Tables the model
 * picked (`pinned`) start above the best match.
 * With embeddings (`semantic`), the tables standing out by meaning count as one more question term: those
 * at least 2 standard deviations above the schema's mean similarity score like a column-name match (2) of
 * a term found in just them (idf log(1 + tables / how many)), scaled by how far above they are (the
 * farthest 1); the most similar one is a seed of its own (a concept named in no table's words).
 * Then the FK graph. Seeds are the best direct matches (up to 32, each at least a quarter of the best),
 * the best table of each question term (a value-only word like "jazz" is a concept too) and the pinned
 * tables. Each pair of seeds joined by a path of at most 4 FKs adds 0.5 × the weaker score / path length
 * to both ends (a match that joins other matches beats an isolated look-alike) and gives the tables on the
 * path 0.9 × the weaker score (the join cannot be written without them); every table also gets 60 % of
 * its best neighbour's direct score when that is more (a strong match lifts its neighbours). Last, a
 * tie-breaking prior of 0.05 × log10(1 + rows). Tables under 10 % of the top score are left out unless the
 * whole schema fits the budget, in which case every table is given.
 */
const WEIGHT: Record<Field, number> = { name: 4, column: 2, allowed: 2, comment: 1, stat: 1.5, sample: 0.5 };
const EXACT_NAME_BONUS = 8;
const FK_SHARE = 0.6;
const COHERENCE = 0.5;
const BRIDGE_SHARE = 0.9;
const MAX_SEEDS = 32;
const SEED_FLOOR = 0.25;
const MAX_HOPS = 4;
/** A term matching more tables than this ("name", "id") names no concept of its own. */
const MAX_SEEDS_PER_TERM = 8;
const SIZE_PRIOR = 0.05;
const MIN_RELATIVE_SCORE = 0.1;

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
  const schemaTokens = (index.schemaTokens ??= estimateTokens(index.entries.map(fullBlockOf).join('\n')));
  const ranked = rank(index, question, options, schemaTokens <= budget);
  return fit(ranked, budget, schemaTokens);
}

/** Entries (families collapsed), most relevant to `question` first; `all` keeps those it does not match too, last. */
export function rankedEntries(snapshot: SchemaSnapshot, question: string, all: boolean): readonly TableEntry[] {
  return rank(indexOf(snapshot), question, { budgetTokens: 1 }, all).map((c) => c.entry);
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
    const { table, members } = entry;
    tables.push({
      schema: table.schema,
      name: table.name,
      score: 0,
      columns: table.columns.map((c) => c.name),
      ...(members ? { members } : {}),
    });
  }
  return { blocks, tables, unknown };
}

interface Candidate {
  entry: TableEntry;
  score: number;
  /** Column index → relevance to the question. */
  columnScores: Map<number, number>;
}

/**
 * The question's terms; adjacent words joined too ("high school" also reads "highschool", for the glued
 * identifiers many schemas have: Highschooler, countrylanguage); the money pseudo-term when it asks about
 * revenue, sales, spend, ...
 */
function questionTermsOf(question: string): Set<string> {
  const terms = new Set(termsOf(question));
  const words = question
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter((w) => w !== '');
  words.forEach((word, i) => {
    if (MONEY_WORDS.has(word)) terms.add(MONEY_TERM);
    const next = words[i + 1];
    if (next !== undefined && word.length >= 3 && next.length >= 3)
      for (const term of termOf(word + next) ?? []) terms.add(term);
  });
  return terms;
}

function rank(index: SchemaIndex, question: string, options: SchemaContextOptions, everything: boolean): Candidate[] {
  const { entries } = index;
  const questionTerms = questionTermsOf(question);
  const samplePostings = options.sampleValues
    ? samplePostingsOf(index, options.sampleValues)
    : new Map<string, Posting[]>();
  const direct = new Float64Array(entries.length);
  const columnScores = new Map<number, Map<number, number>>();
  const idf = new Map<string, number>();
  /** Per question term, the tables it matches best: each concept of the question gets a seed of its own. */
  const termSeeds = new Set<number>();

  for (const term of questionTerms) {
    const found = [...(index.postings.get(term) ?? []), ...(samplePostings.get(term) ?? [])];
    if (found.length === 0) continue;
    const weight = Math.log(1 + entries.length / new Set(found.map((p) => p.table)).size);
    idf.set(term, weight);
    const best = new Map<number, number>();
    for (const p of found) {
      const w = WEIGHT[p.field];
      if (w > (best.get(p.table) ?? 0)) best.set(p.table, w);
      if (p.column >= 0) {
        let scores = columnScores.get(p.table);
        if (!scores) columnScores.set(p.table, (scores = new Map<number, number>()));
        scores.set(p.column, (scores.get(p.column) ?? 0) + w * weight);
      }
    }
    for (const [table, w] of best) direct[table] = (direct[table] ?? 0) + w * weight;
    const bestWeight = Math.max(...best.values());
    if (best.size <= MAX_SEEDS_PER_TERM) for (const [table, w] of best) if (w === bestWeight) termSeeds.add(table);
  }
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (!entry || direct[i] === 0 || entry.nameTerms.size === 0) continue;
    let exact = 0;
    for (const term of entry.nameTerms) {
      const w = idf.get(term);
      if (w === undefined || !questionTerms.has(term)) {
        exact = 0;
        break;
      }
      exact += w;
    }
    direct[i] = (direct[i] ?? 0) + EXACT_NAME_BONUS * exact;
  }
  if (options.semantic) addSemantic(index, options.semantic, direct, termSeeds);
  const pinned = pinnedEntries(index, options.pinned ?? []);
  if (pinned.size > 0) {
    const top = Math.max(1, ...direct);
    for (const e of pinned) direct[e] = (direct[e] ?? 0) + top;
  }

  const joined = joinScores(index, direct, new Set([...pinned, ...termSeeds]));
  const candidates: Candidate[] = [];
  entries.forEach((entry, i) => {
    let neighbourBest = 0;
    for (const j of index.graph.neighbours(i)) neighbourBest = Math.max(neighbourBest, direct[j] ?? 0);
    const relevance =
      (direct[i] ?? 0) + (joined.coherence[i] ?? 0) + Math.max(FK_SHARE * neighbourBest, joined.bridge[i] ?? 0);
    if (relevance === 0 && !everything) return;
    const rows = Math.max(0, entry.table.rowEstimate ?? 0);
    candidates.push({
      entry,
      score: relevance + SIZE_PRIOR * Math.log10(1 + rows),
      columnScores: columnScores.get(i) ?? new Map<number, number>(),
    });
  });
  candidates.sort((a, b) => b.score - a.score || (a.entry.key < b.entry.key ? -1 : a.entry.key > b.entry.key ? 1 : 0));
  if (everything) return candidates;
  const floor = (candidates[0]?.score ?? 0) * MIN_RELATIVE_SCORE;
  return candidates.filter((c) => c.score >= floor);
}

const SEMANTIC_Z = 2;
const SEMANTIC_MIN_TABLES = 5;

/** The embedding signal (see Scoring): tables far above the schema's usual similarity to the question. */
function addSemantic(
  index: SchemaIndex,
  semantic: ReadonlyMap<string, number>,
  direct: Float64Array,
  termSeeds: Set<number>,
): void {
  const sims = index.entries.map((e) => semantic.get(e.key));
  const known = sims.filter((x): x is number => x !== undefined);
  if (known.length < SEMANTIC_MIN_TABLES) return;
  const mean = known.reduce((a, b) => a + b, 0) / known.length;
  const sd = Math.sqrt(known.reduce((a, b) => a + (b - mean) ** 2, 0) / known.length);
  if (sd === 0) return;
  const standing = sims.map((x) => (x === undefined ? 0 : (x - mean) / sd));
  const above = standing.flatMap((z, i) => (z >= SEMANTIC_Z ? [i] : []));
  if (above.length === 0) return;
  const top = Math.max(...above.map((i) => standing[i] ?? 0));
  const weight = WEIGHT.column * Math.log(1 + index.entries.length / above.length);
  for (const i of above) direct[i] = (direct[i] ?? 0) + (weight * (standing[i] ?? 0)) / top;
  const best = above.reduce((a, b) => ((standing[b] ?? 0) > (standing[a] ?? 0) ? b : a));
  termSeeds.add(best);
}

/** Seeds (the best direct matches and the pinned tables) joined to each other along shortest FK paths. */
function joinScores(
  index: SchemaIndex,
  direct: Float64Array,
  extraSeeds: ReadonlySet<number>,
): { coherence: Float64Array; bridge: Float64Array } {
  const coherence = new Float64Array(direct.length);
  const bridge = new Float64Array(direct.length);
  const top = Math.max(0, ...direct);
  if (top === 0) return { coherence, bridge };
  const seeds = [...direct.keys()]
    .filter((i) => (direct[i] ?? 0) >= SEED_FLOOR * top)
    .sort((a, b) => (direct[b] ?? 0) - (direct[a] ?? 0))
    .slice(0, MAX_SEEDS);
  for (const p of extraSeeds) if (!seeds.includes(p)) seeds.push(p);
  const seedSet = new Set(seeds);
  for (const a of seeds) {
    for (const [b, between] of index.graph.pathsFrom(a, seedSet, MAX_HOPS)) {
      const weaker = Math.min(direct[a] ?? 0, direct[b] ?? 0);
      coherence[a] = (coherence[a] ?? 0) + (COHERENCE * weaker) / (between.length + 1);
      for (const n of between) bridge[n] = Math.max(bridge[n] ?? 0, BRIDGE_SHARE * weaker);
    }
  }
  return { coherence, bridge };
}

/** "schema.table" or a bare table name (public first, then any schema) → entry indexes; unknown names are ignored. */
function pinnedEntries(index: SchemaIndex, names: readonly string[]): Set<number> {
  const found = new Set<number>();
  for (const raw of names) {
    const name = raw.trim().replaceAll('"', '');
    const e =
      index.byKey.get(name) ??
      index.byKey.get(keyOf('public', name)) ??
      index.entries.findIndex(
        (x) =>
          x.table.name === name ||
          x.key.toLowerCase() === name.toLowerCase() ||
          x.table.name.toLowerCase() === name.toLowerCase(),
      );
    if (e !== undefined && e >= 0) found.add(e);
  }
  return found;
}

function samplePostingsOf(index: SchemaIndex, samples: Map<string, string[]>): Map<string, Posting[]> {
  const postings = new Map<string, Posting[]>();
  for (const [key, values] of samples) {
    const dot = key.lastIndexOf('.');
    const table = index.byKey.get(key.slice(0, dot));
    if (dot < 0 || table === undefined) continue;
    const column = index.entries[table]?.table.columns.findIndex((c) => c.name === key.slice(dot + 1)) ?? -1;
    if (column < 0) continue;
    for (const term of new Set(values.flatMap((v) => termsOf(v)))) {
      const list = postings.get(term) ?? [];
      list.push({ table, field: 'sample', column });
      postings.set(term, list);
    }
  }
  return postings;
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
    const { table } = candidate.entry;
    const full = fullBlockOf(candidate.entry);
    let block: string | undefined;
    let columns: string[] = [];
    if (full.length <= room) {
      block = full;
      columns = table.columns.map((c) => c.name);
    } else {
      const order = columnPriority(candidate);
      for (let k = Math.min(order.essential, table.columns.length - 1); k >= 1 && block === undefined; k--) {
        const picked = order.columns.slice(0, k);
        const trimmed = renderBlock(candidate.entry, picked, table.columns.length - k);
        if (trimmed.length <= room) {
          block = trimmed;
          columns = picked.map((c) => c.name);
        }
      }
    }
    if (block === undefined) continue;
    used += block.length + (blocks.length > 0 ? 1 : 0);
    blocks.push(block);
    const { members } = candidate.entry;
    tables.push({
      schema: table.schema,
      name: table.name,
      score: candidate.score,
      columns,
      ...(members ? { members } : {}),
    });
  }
  const text = blocks.join('\n');
  return { tables, tokens: estimateTokens(text), budget, schemaTokens, text };
}

/** Primary key, then columns the question matched (best first), then FK columns: the essential ones; then the rest. */
function columnPriority(candidate: Candidate): { columns: ColumnInfo[]; essential: number } {
  const { table, fkColumns } = candidate.entry;
  const pk = new Set(table.primaryKey ?? []);
  const matched = [...candidate.columnScores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([c]) => c);
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

/**
 * The ranking of a schema's entries for a question (see Scoring below): words, identifiers and numbers, the
 * FK graph (declared and inferred joins), and the optional signals of a model (pinned tables, embeddings).
 */
import { MONEY_TERM, MONEY_WORDS } from '../identifierWords';
import type { Field, Posting, SchemaIndex, TableEntry } from './schemaIndex';
import { keyOf } from './schemaIndex';
import { termOf, termsOf } from '../tokens';
import { addNamed, focusSchemas, shownSchema } from './namedInQuestion';
import { liftSubjectTables } from './subjectTables';
import { isUnnamedPlugin } from './tableRoles';

/**
 * Scoring. Each question term scores once per table, in the best field it appears in, times its inverse
 * document frequency over tables (a term found in every table, like "date", counts little): table-name
 * term 4 > column name, a word of a glued name (portdnses → port), allowed value (enum label, CHECK literal)
 * 2 > a word of the column's statistics 1.5 > comment 1 > sample value 0.5; a table whose name terms are all
 * in the question adds 8 × the idf of its name terms (exact ≫ token match). Adjacent question words also count
 * joined ("high school" → highschooler), and money words (revenue, sales, spend) match money-typed columns.
 * Numbered names and schemas the question names ("tenant 7", "t_12"), and the schema it is about, are
 * weighed next (namedInQuestion.ts). Tables the model picked (`pinned`) start above the best match.
 * With embeddings (`semantic`), the tables standing out by meaning count as one more question term: those
 * at least 2 standard deviations above the schema's mean similarity score like a column-name match (2) of
 * a term found in just them (idf log(1 + tables / how many)), scaled by how far above they are (the
 * farthest 1); the most similar one is a seed of its own (a concept named in no table's words).
 * Then the FK graph (declared foreign keys, and joins inferred from names where a schema declares none).
 * Seeds are the best direct matches (up to 32, each at least a quarter of the best),
 * the best table of each question term (a value-only word like "jazz" is a concept too) and the pinned
 * tables. Each pair of seeds joined by a path of at most 4 FKs adds 0.5 × the weaker score / path length
 * to both ends (a match that joins other matches beats an isolated look-alike) and gives the tables on the
 * path 0.9 × the weaker score (the join cannot be written without them); every table also gets 60 % of
 * its best neighbour's direct score when that is more (a strong match lifts its neighbours), 75 % of it
 * from a table it belongs to (its FK is part of its key: an extension or association table); a plug-in's
 * table the question does not name (its name starts with a prefix many tables share, tableRoles.ts) gets
 * half of what its neighbours and paths give it (a person skips a vendor's tables unless asked). Then the
 * tables of what the question is about (its named best matches) are lifted by how the schema ties them to
 * it (subjectTables.ts). Last, a
 * tie-breaking prior of 0.05 × log10(1 + rows). Tables under 10 % of the top score are left out unless the
 * whole schema fits the budget, in which case every table is given.
 */
const WEIGHT: Record<Field, number> = { name: 4, column: 2, glued: 2, allowed: 2, comment: 1, stat: 1.5, sample: 0.5 };
const EXACT_NAME_BONUS = 8;
const FK_SHARE = 0.6;
const COHERENCE = 0.5;
const OWNED_SHARE = 0.75;
const BRIDGE_SHARE = 0.9;
/** What neighbours and paths give a plug-in's table the question does not name (tableRoles.ts). */
const PLUGIN_SHARE = 0.5;
const MAX_SEEDS = 32;
const SEED_FLOOR = 0.25;
const MAX_HOPS = 4;
/** A term matching more tables than this ("name", "id") names no concept of its own. */
const MAX_SEEDS_PER_TERM = 8;
const SIZE_PRIOR = 0.05;
const MIN_RELATIVE_SCORE = 0.1;

/** What the ranking takes of the context's options (schemaContext.ts documents each). */
export interface RankOptions {
  sampleValues?: Map<string, string[]>;
  pinned?: readonly string[];
  semantic?: ReadonlyMap<string, number>;
}

export interface Candidate {
  entry: TableEntry;
  score: number;
  /** The schema a group entry is shown in when the question names one of its schemas. */
  schema?: string;
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

export function rank(index: SchemaIndex, question: string, options: RankOptions, everything: boolean): Candidate[] {
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
  /** Schema → the idf of the question terms its tables match (how much of the question it speaks of). */
  const coverage = new Map<string, number>();
  /** Table → question term → what it added to the table's direct score (the subject's tables weigh them apart). */
  const termScores = new Map<number, Map<string, number>>();

  for (const term of questionTerms) {
    const found = [...(index.postings.get(term) ?? []), ...(samplePostings.get(term) ?? [])];
    if (found.length === 0) continue;
    const weight = Math.log(1 + entries.length / new Set(found.map((p) => p.table)).size);
    idf.set(term, weight);
    const schemas = new Set<string>();
    for (const p of found) {
      const entry = entries[p.table];
      if (entry && !entry.schemas) schemas.add(entry.table.schema);
    }
    for (const schema of schemas) coverage.set(schema, (coverage.get(schema) ?? 0) + weight);
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
    for (const [table, w] of best) {
      direct[table] = (direct[table] ?? 0) + w * weight;
      let terms = termScores.get(table);
      if (!terms) termScores.set(table, (terms = new Map<string, number>()));
      terms.set(term, w * weight);
    }
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
  const named = addNamed(index, question, questionTerms, direct);
  focusSchemas(index, direct, named, coverage);
  if (options.semantic) addSemantic(index, options.semantic, direct, termSeeds);
  const pinned = pinnedEntries(index, options.pinned ?? []);
  if (pinned.size > 0) {
    let top = 1;
    for (const d of direct) top = Math.max(top, d);
    for (const e of pinned) direct[e] = (direct[e] ?? 0) + top;
  }

  const joined = joinScores(index, direct, new Set([...pinned, ...termSeeds]));
  const relevance = new Float64Array(entries.length);
  entries.forEach((entry, i) => {
    let neighbourBest = 0;
    for (const j of index.graph.neighbours(i)) neighbourBest = Math.max(neighbourBest, direct[j] ?? 0);
    for (const j of entry.owners ?? [])
      neighbourBest = Math.max(neighbourBest, (OWNED_SHARE / FK_SHARE) * (direct[j] ?? 0));
    const plugin = isUnnamedPlugin(index, entry, questionTerms) ? PLUGIN_SHARE : 1;
    relevance[i] =
      (direct[i] ?? 0) +
      (joined.coherence[i] ?? 0) +
      plugin * Math.max(FK_SHARE * neighbourBest, joined.bridge[i] ?? 0);
  });
  liftSubjectTables(index, question, relevance, termScores);
  const candidates: Candidate[] = [];
  entries.forEach((entry, i) => {
    if (relevance[i] === 0 && !everything) return;
    const rows = Math.max(0, entry.table.rowEstimate ?? 0);
    const schema = shownSchema(entry.schemas, named);
    candidates.push({
      entry,
      score: (relevance[i] ?? 0) + SIZE_PRIOR * Math.log10(1 + rows),
      columnScores: columnScores.get(i) ?? new Map<number, number>(),
      ...(schema ? { schema } : {}),
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
  let top = 0;
  for (const d of direct) top = Math.max(top, d);
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
export function pinnedEntries(index: SchemaIndex, names: readonly string[]): Set<number> {
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

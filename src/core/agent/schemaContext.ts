/**
 * The schema context of a question: the tables and columns a language model is shown, ranked by
 * relevance to the question and cut to a token budget, so that context stays bounded on any schema size.
 */
import { AgentError } from '../errors';
import type { ColumnInfo, SchemaSnapshot, TableInfo } from '../../shared/schema';
import { estimateTokens, termsOf } from './tokens';

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
}

/**
 * Scoring. Each question term scores once per table, in the best field it appears in, times its
 * inverse document frequency over tables (a term found in every table, like "date", counts little):
 * table-name term 4 > column name 2 > comment 1 > sample value 0.5; a table whose name terms are all in
 * the question adds 8 × the idf of its name terms (exact ≫ token match). Then each table gets 35 % of the
 * best direct score among its FK neighbours (both directions, one hop) so joins are possible, and a
 * tie-breaking prior of 0.05 × log10(1 + rows). Tables under 10 % of the top score are left out unless
 * the whole schema fits the budget, in which case every table is given.
 */
const WEIGHT = { name: 4, column: 2, comment: 1, sample: 0.5 } as const;
const EXACT_NAME_BONUS = 8;
const FK_SHARE = 0.35;
const SIZE_PRIOR = 0.05;
const MIN_RELATIVE_SCORE = 0.1;
const MAX_COMMENT_CHARS = 100;

type Field = keyof typeof WEIGHT;

interface Posting {
  table: number;
  field: Field;
  /** Column index, or -1 for the table itself (its name or comment). */
  column: number;
}

interface TableEntry {
  table: TableInfo;
  key: string;
  nameTerms: ReadonlySet<string>;
  /** Column name → "→ target" text of single-column foreign keys. */
  fkTargets: ReadonlyMap<string, string>;
  fkColumns: ReadonlySet<string>;
  neighbours: number[];
  fullBlock?: string;
}

interface SchemaIndex {
  entries: TableEntry[];
  byKey: ReadonlyMap<string, number>;
  postings: Map<string, Posting[]>;
  schemaTokens?: number;
}

// Snapshots are immutable values (the schema cache hands out a new one when the schema changes), so the
// term index is built once per snapshot and reused by every question about it.
const indexes = new WeakMap<SchemaSnapshot, SchemaIndex>();

export function buildSchemaContext(snapshot: SchemaSnapshot, question: string, options: SchemaContextOptions): SchemaContext {
  const budget = options.budgetTokens;
  if (!Number.isSafeInteger(budget) || budget <= 0) {
    throw new AgentError('BAD_INPUT', `The context token budget must be a positive whole number, got ${budget}.`);
  }
  const index = indexOf(snapshot);
  const schemaTokens = (index.schemaTokens ??= estimateTokens(index.entries.map(fullBlockOf).join('\n')));
  const ranked = rank(index, question, options.sampleValues, schemaTokens <= budget);
  return fit(ranked, budget, schemaTokens);
}

function indexOf(snapshot: SchemaSnapshot): SchemaIndex {
  const cached = indexes.get(snapshot);
  if (cached) return cached;
  const memo = new Map<string, string[]>();
  const identifierTerms = (text: string): string[] => {
    let terms = memo.get(text);
    if (!terms) memo.set(text, (terms = termsOf(text, 'identifier')));
    return terms;
  };
  const byKey = new Map<string, number>();
  snapshot.tables.forEach((t, i) => byKey.set(keyOf(t.schema, t.name), i));
  const postings = new Map<string, Posting[]>();
  const add = (term: string, posting: Posting): void => {
    const list = postings.get(term);
    if (list) list.push(posting);
    else postings.set(term, [posting]);
  };
  const entries = snapshot.tables.map((table, i): TableEntry => {
    const nameTerms = new Set(identifierTerms(table.name));
    for (const term of nameTerms) add(term, { table: i, field: 'name', column: -1 });
    if (table.comment) for (const term of new Set(termsOf(table.comment))) add(term, { table: i, field: 'comment', column: -1 });
    table.columns.forEach((column, c) => {
      for (const term of identifierTerms(column.name)) add(term, { table: i, field: 'column', column: c });
      if (column.comment) for (const term of termsOf(column.comment)) add(term, { table: i, field: 'comment', column: c });
      if (column.samples) for (const term of new Set(column.samples.flatMap((v) => termsOf(v)))) add(term, { table: i, field: 'sample', column: c });
    });
    const fkTargets = new Map<string, string>();
    const fkColumns = new Set<string>();
    for (const fk of table.foreignKeys) {
      for (const c of fk.columns) fkColumns.add(c);
      const [column] = fk.columns;
      const [target] = fk.references.columns;
      if (fk.columns.length === 1 && column !== undefined && target !== undefined) {
        fkTargets.set(column, `${displayName(fk.references.schema, fk.references.table)}.${target}`);
      }
    }
    return { table, key: keyOf(table.schema, table.name), nameTerms, fkTargets, fkColumns, neighbours: [] };
  });
  entries.forEach((entry, i) => {
    for (const fk of entry.table.foreignKeys) {
      const j = byKey.get(keyOf(fk.references.schema, fk.references.table));
      if (j === undefined || j === i) continue;
      entry.neighbours.push(j);
      entries[j]?.neighbours.push(i);
    }
  });
  const index: SchemaIndex = { entries, byKey, postings };
  indexes.set(snapshot, index);
  return index;
}

interface Candidate {
  entry: TableEntry;
  score: number;
  /** Column index → relevance to the question. */
  columnScores: Map<number, number>;
}

function rank(index: SchemaIndex, question: string, samples: Map<string, string[]> | undefined, everything: boolean): Candidate[] {
  const { entries } = index;
  const questionTerms = new Set(termsOf(question));
  const samplePostings = samples ? samplePostingsOf(index, samples) : new Map<string, Posting[]>();
  const direct = new Float64Array(entries.length);
  const columnScores = new Map<number, Map<number, number>>();
  const idf = new Map<string, number>();

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

  const candidates: Candidate[] = [];
  entries.forEach((entry, i) => {
    let neighbourBest = 0;
    for (const j of entry.neighbours) neighbourBest = Math.max(neighbourBest, direct[j] ?? 0);
    const relevance = (direct[i] ?? 0) + FK_SHARE * neighbourBest;
    if (relevance === 0 && !everything) return;
    const rows = Math.max(0, entry.table.rowEstimate ?? 0);
    candidates.push({ entry, score: relevance + SIZE_PRIOR * Math.log10(1 + rows), columnScores: columnScores.get(i) ?? new Map<number, number>() });
  });
  candidates.sort((a, b) => b.score - a.score || (a.entry.key < b.entry.key ? -1 : a.entry.key > b.entry.key ? 1 : 0));
  if (everything) return candidates;
  const floor = (candidates[0]?.score ?? 0) * MIN_RELATIVE_SCORE;
  return candidates.filter((c) => c.score >= floor);
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
    tables.push({ schema: table.schema, name: table.name, score: candidate.score, columns });
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

function fullBlockOf(entry: TableEntry): string {
  return (entry.fullBlock ??= renderBlock(entry, entry.table.columns, 0));
}

function renderBlock(entry: TableEntry, columns: readonly ColumnInfo[], omitted: number): string {
  const { table } = entry;
  const pk = new Set(table.primaryKey ?? []);
  const parts = columns.map((c) => {
    const target = entry.fkTargets.get(c.name);
    return `${c.name} ${shortType(c.type)}${pk.has(c.name) ? ' pk' : ''}${target ? ` → ${target}` : ''}${c.comment ? ` /* ${clip(c.comment)} */` : ''}`;
  });
  const included = new Set(columns.map((c) => c.name));
  for (const fk of table.foreignKeys) {
    if (fk.columns.length > 1 && fk.columns.every((c) => included.has(c))) {
      parts.push(`(${fk.columns.join(', ')}) → ${displayName(fk.references.schema, fk.references.table)}(${fk.references.columns.join(', ')})`);
    }
  }
  if (omitted > 0) parts.push(`… ${omitted} more column${omitted === 1 ? '' : 's'}`);
  const kind = table.kind === 'table' || table.kind === 'partitioned_table' ? '' : `${table.kind.replace('_', ' ')} `;
  return `${kind}${displayName(table.schema, table.name)}(${parts.join(', ')})${table.comment ? ` -- ${clip(table.comment)}` : ''}`;
}

const TYPE_ABBREVIATIONS: readonly [RegExp, string][] = [
  [/^timestamp(\(\d+\))? with time zone/, 'timestamptz$1'],
  [/^timestamp(\(\d+\))? without time zone/, 'timestamp$1'],
  [/^time(\(\d+\))? without time zone/, 'time$1'],
  [/^character varying/, 'varchar'],
  [/^integer/, 'int'],
  [/^boolean/, 'bool'],
];

const shortTypes = new Map<string, string>();

function shortType(type: string): string {
  let short = shortTypes.get(type);
  if (short === undefined) {
    const rule = TYPE_ABBREVIATIONS.find(([pattern]) => pattern.test(type));
    short = rule ? type.replace(rule[0], rule[1]) : type;
    if (shortTypes.size < 10_000) shortTypes.set(type, short);
  }
  return short;
}

function clip(comment: string): string {
  const flat = comment.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_COMMENT_CHARS ? `${flat.slice(0, MAX_COMMENT_CHARS - 1)}…` : flat;
}

function keyOf(schema: string, name: string): string {
  return `${schema}.${name}`;
}

function displayName(schema: string, name: string): string {
  return schema === 'public' ? name : `${schema}.${name}`;
}

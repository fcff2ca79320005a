/**
 * The term index of a schema snapshot, built once per snapshot and reused by every question about it:
 * which tables and columns each term is found in (names, comments, allowed values, value words), the
 * families collapsed into one entry each, and the foreign-key graph between the entries.
 */
import type { SchemaSnapshot, TableInfo } from '../../../shared/schema';
import { FkGraph } from '../fkGraph';
import { ABBREVIATIONS, GLUED_LAST_WORDS, isMoneyType, MONEY_TERM } from '../identifierWords';
import { gluedSplitter, identifierParts, MIN_PIECE } from './gluedWords';
import { inferredJoins } from './inferredJoins';
import { numberedKeys } from './numberedNames';
import { schemaGroups } from './schemaGroups';
import { tableFamilies } from '../tableFamilies';
import { stem, termOf, termsOf } from '../tokens';

/** Where a term was found, by how much it says about the table (see WEIGHT in schemaContext.ts). */
/** `glued`: a word of a glued part of a table or column name ("portdnses" → port), weaker than a name's own words. */
export type Field = 'name' | 'column' | 'glued' | 'allowed' | 'comment' | 'stat' | 'sample';

export interface Posting {
  /** Entry index (a family's representative stands for all its members). */
  table: number;
  field: Field;
  /** Column index in the entry's table, or -1 for the table itself (its name or comment). */
  column: number;
}

export interface TableEntry {
  table: TableInfo;
  key: string;
  nameTerms: ReadonlySet<string>;
  /** Column name → "→ target" text of single-column foreign keys. */
  fkTargets: ReadonlyMap<string, string>;
  fkColumns: ReadonlySet<string>;
  /** Names of every member when this entry stands for a family (itself first). */
  members?: string[];
  /** The schemas whose same table this entry stands for (a schema per tenant), its own first; with each one's table. */
  schemas?: string[];
  groupTables?: TableInfo[];
  /** Column name → a join the schema does not declare but names imply (see inferredJoins.ts). */
  inferred?: Map<string, InferredTarget>;
  /** Entries this table belongs to: its foreign key is part of its primary key (an extension, an association). */
  owners?: number[];
  fullBlock?: string;
}

export interface InferredTarget {
  /** "→ target" text, saying the join is inferred. */
  text: string;
  /** The entry it joins. */
  entry: number;
  /** The ranking follows it (its schema declares no joins of its own: inferredJoins.ts). */
  followed: boolean;
}

export interface SchemaIndex {
  entries: TableEntry[];
  /** "schema.table" of every table, members included → its entry. */
  byKey: ReadonlyMap<string, number>;
  postings: Map<string, Posting[]>;
  graph: FkGraph;
  /** "word number" keys of numbered table names ("t 12", "module 17") → entries; of schema names → schemas. */
  numberedTables: Map<string, number[]>;
  numberedSchemas: Map<string, string[]>;
  /** Schema name (without digits: numbered ones are in numberedSchemas) → its terms, for a schema named by words. */
  schemaTerms: Map<string, string[]>;
  schemaTokens?: number;
}

const indexes = new WeakMap<SchemaSnapshot, SchemaIndex>();

export function keyOf(schema: string, name: string): string {
  return `${schema}.${name}`;
}

export function displayName(schema: string, name: string): string {
  return schema === 'public' ? name : `${schema}.${name}`;
}

// Snapshots are immutable values (the schema cache hands out a new one when the schema changes).
export function indexOf(snapshot: SchemaSnapshot): SchemaIndex {
  const cached = indexes.get(snapshot);
  if (cached) return cached;
  const families = tableFamilies(snapshot.tables);
  const familyHeads = snapshot.tables.flatMap((_, i) => (families.representative[i] === i ? [i] : []));
  const familyNames = (i: number) => (families.members.get(i) ?? []).map((m) => snapshot.tables[m]?.name).join(',');
  const groups = schemaGroups(snapshot.tables, familyHeads, familyNames);
  /** Table index → the table that stands for it: its family's head, then that head's group's. */
  const headOf = (i: number): number => {
    const f = families.representative[i] ?? i;
    return groups.representative[f] ?? f;
  };
  const { identifierTerms, gluedTerms } = identifierTermsOf(snapshot);
  const entryOf = new Int32Array(snapshot.tables.length).fill(-1);
  const entries: TableEntry[] = [];
  for (const i of familyHeads) {
    const table = snapshot.tables[i];
    if (!table || groups.representative[i] !== i) continue;
    entryOf[i] = entries.length;
    const memberIndexes = families.members.get(i);
    const entry: TableEntry = {
      table,
      key: keyOf(table.schema, table.name),
      nameTerms: new Set(identifierTerms(table.name)),
      ...fkTextOf(table),
    };
    if (memberIndexes) entry.members = memberIndexes.map((m) => snapshot.tables[m]?.name ?? '');
    const group = groups.members.get(i);
    if (group) {
      entry.groupTables = group.map((g) => snapshot.tables[g] ?? table);
      entry.schemas = entry.groupTables.map((t) => t.schema);
    }
    entries.push(entry);
  }
  const byKey = new Map<string, number>();
  snapshot.tables.forEach((t, i) => byKey.set(keyOf(t.schema, t.name), entryOf[headOf(i)] ?? 0));

  const postings = new Map<string, Posting[]>();
  const add = (term: string, posting: Posting): void => {
    const list = postings.get(term);
    if (list) list.push(posting);
    else postings.set(term, [posting]);
  };
  entries.forEach((entry, e) => {
    const { table } = entry;
    for (const term of entry.nameTerms) add(term, { table: e, field: 'name', column: -1 });
    for (const term of gluedTerms(table.name)) add(term, { table: e, field: 'glued', column: -1 });
    if (table.comment)
      for (const term of new Set(termsOf(table.comment))) add(term, { table: e, field: 'comment', column: -1 });
    table.columns.forEach((column, c) => {
      for (const term of identifierTerms(column.name)) add(term, { table: e, field: 'column', column: c });
      for (const term of gluedTerms(column.name)) add(term, { table: e, field: 'glued', column: c });
      if (isMoneyType(column.type)) add(MONEY_TERM, { table: e, field: 'column', column: c });
      if (column.comment)
        for (const term of new Set(termsOf(column.comment))) add(term, { table: e, field: 'comment', column: c });
      if (column.allowedValues)
        for (const term of new Set(column.allowedValues.flatMap((v) => termsOf(v))))
          add(term, { table: e, field: 'allowed', column: c });
      if (column.samples)
        for (const term of new Set(column.samples.flatMap((v) => termsOf(v))))
          add(term, { table: e, field: 'sample', column: c });
    });
  });
  // Value words of every member (shards hold different values), each once per entry and column.
  snapshot.tables.forEach((table, i) => {
    const e = entryOf[headOf(i)] ?? -1;
    const entry = entries[e];
    if (!entry) return;
    table.columns.forEach((column) => {
      if (!column.valueWords) return;
      const c = entry.table.columns.findIndex((x) => x.name === column.name);
      if (c < 0) return;
      for (const word of column.valueWords) {
        const term = termOf(word)?.[0];
        if (!term) continue;
        const list = postings.get(term);
        if (list?.some((p) => p.table === e && p.column === c && p.field === 'stat')) continue;
        add(term, { table: e, field: 'stat', column: c });
      }
    });
  });
  addDerivedTerms(postings);

  const graph = new FkGraph(entries.length);
  entries.forEach((entry, e) => {
    const key = new Set(entry.table.primaryKey ?? []);
    for (const fk of entry.table.foreignKeys) {
      const target = byKey.get(keyOf(fk.references.schema, fk.references.table));
      if (target === undefined) continue;
      graph.addEdge(e, target);
      if (target !== e && fk.columns.every((c) => key.has(c))) (entry.owners ??= []).push(target);
    }
  });
  // Members' own foreign keys join the family too (a group's members have the same ones as its head).
  snapshot.tables.forEach((table, i) => {
    const e = entryOf[families.representative[i] ?? i] ?? -1;
    if (families.representative[i] === i || e < 0) return;
    for (const fk of table.foreignKeys) {
      const target = byKey.get(keyOf(fk.references.schema, fk.references.table));
      if (target !== undefined) graph.addEdge(e, target);
    }
  });
  for (const join of inferredJoins(
    snapshot.tables,
    familyHeads.filter((i) => groups.representative[i] === i),
  )) {
    const from = entries[entryOf[join.from] ?? -1];
    const to = snapshot.tables[join.to];
    const target = entryOf[join.to] ?? -1;
    if (!from || !to || target < 0) continue;
    const text = `${displayName(to.schema, to.name)}.${join.target} (inferred)`;
    (from.inferred ??= new Map()).set(join.column, { text, entry: target, followed: join.followed });
    if (join.followed) graph.addEdge(entryOf[join.from] ?? -1, target);
  }
  const numberedTables = new Map<string, number[]>();
  entries.forEach((entry, e) => {
    for (const key of new Set(numberedKeys(entry.table.name))) {
      const list = numberedTables.get(key);
      if (list) list.push(e);
      else numberedTables.set(key, [e]);
    }
  });
  const numberedSchemas = new Map<string, string[]>();
  const schemaTerms = new Map<string, string[]>();
  for (const schema of new Set(snapshot.tables.map((t) => t.schema))) {
    if (!/\d/.test(schema)) schemaTerms.set(schema, [...new Set(termsOf(schema, 'identifier'))]);
    for (const key of new Set(numberedKeys(schema)))
      numberedSchemas.set(key, [...(numberedSchemas.get(key) ?? []), schema]);
  }
  const index: SchemaIndex = { entries, byKey, postings, graph, numberedTables, numberedSchemas, schemaTerms };
  indexes.set(snapshot, index);
  return index;
}

/**
 * The terms of an identifier, memoized per snapshot: its words (split at underscores, case and digits,
 * abbreviations spelled out, stemmed); and apart, the words of its glued parts that the schema spells apart
 * elsewhere or that are known abbreviations ("portdnses" → port, dns; "networkrbacs" → network, access
 * control), which score less than a name's own words (a glued word may be one
 * word, like "airlines").
 */
function identifierTermsOf(snapshot: SchemaSnapshot): {
  identifierTerms: (text: string) => string[];
  gluedTerms: (text: string) => string[];
} {
  // Known abbreviations are words of every schema ("networkrbacs" → network, rbac → access control).
  const vocabulary = new Set([...ABBREVIATIONS.keys()].filter((a) => a.length >= MIN_PIECE));
  const seen = new Set<string>();
  const learn = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const parts = identifierParts(name);
    if (parts.length >= 2) for (const p of parts) if (p.length >= 3) vocabulary.add(p);
  };
  for (const t of snapshot.tables) {
    learn(t.name);
    for (const c of t.columns) learn(c.name);
  }
  const split = gluedSplitter(vocabulary);
  const memo = new Map<string, string[]>();
  const identifierTerms = (text: string): string[] => {
    let terms = memo.get(text);
    if (!terms) memo.set(text, (terms = [...new Set(termsOf(text, 'identifier'))]));
    return terms;
  };
  const gluedMemo = new Map<string, string[]>();
  const gluedTerms = (text: string): string[] => {
    let terms = gluedMemo.get(text);
    if (!terms) {
      const own = new Set(identifierTerms(text));
      const pieces = identifierParts(text).flatMap((p) => split(p) ?? []);
      terms = [...new Set(pieces.flatMap((piece) => termsOf(piece, 'identifier')))].filter((t) => !own.has(t));
      gluedMemo.set(text, terms);
    }
    return terms;
  };
  return { identifierTerms, gluedTerms };
}

/**
 * Words an identifier implies: the front of a glued word ("songname", "customerid" → song, customer) and
 * the verb of an agent noun ("teacher", "owner", "winner" → teach, own, win), each only when the schema
 * or the language makes it a word: a glued front must be a word of the schema elsewhere.
 */
function addDerivedTerms(postings: Map<string, Posting[]>): void {
  const lastStems = GLUED_LAST_WORDS.map(stem);
  for (const [term, list] of [...postings]) {
    const last = lastStems.find((l) => term.length >= l.length + 4 && term.endsWith(l));
    const front = last === undefined ? undefined : termOf(term.slice(0, -last.length))?.[0];
    const verb = agentVerb(term);
    if ((!front || !postings.has(front)) && (verb === undefined || verb === term)) continue;
    const named = list.filter((p) => p.field === 'name' || p.field === 'column');
    if (named.length === 0) continue;
    if (front && postings.has(front)) postings.get(front)?.push(...named);
    if (verb !== undefined && verb !== term) {
      const existing = postings.get(verb);
      if (existing) existing.push(...named);
      else postings.set(verb, [...named]);
    }
  }
}

/** "teacher" → "teach", "winner" → "win", "producer" → "produc" (the stem of "produce"); else undefined. */
function agentVerb(term: string): string | undefined {
  if (term.length < 6 || !/(?:er|or)$/.test(term)) return undefined;
  let front = term.slice(0, -2);
  const last = front[front.length - 1];
  if (last !== undefined && last === front[front.length - 2] && !'lsz'.includes(last)) front = front.slice(0, -1);
  return termOf(front)?.[0];
}

export function fkTextOf(table: TableInfo): Pick<TableEntry, 'fkTargets' | 'fkColumns'> {
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
  return { fkTargets, fkColumns };
}

/**
 * The tables of what the question is about. "Information about the port with …" asks for the port and what
 * is kept about it in other tables: an application reading a port reads its detail tables with it, and
 * nothing in the question names them. The subjects are the best matches (at least half the top score, the
 * first five) whose whole name the question says outside an aside in parentheses ("port", "floating IP" →
 * floatingips; "(including info caches, and security groups)" names what to add, not the subject), first
 * named first; only those in the schema of the best match (schemas loaded side by side), and the same-named
 * table in the other schemas (the question does not say which database's ports it means). The first one is
 * what the question asks about; the others say which ("the port … under network 7"): only its tables are
 * lifted, to a share of its score by how closely the schema ties them to it (roles from tableRoles.ts):
 * - a child named after it (an FK to it, its name starting with the subject's: instance_extra, portdnses) 0.9;
 * - an association child (every column an FK column: network_agent_bindings) 0.8; a child no table points
 *   at (a detail, not an entity of its own) whose declared foreign keys all point at the subject (an
 *   extension or a list of its own: portsecuritybindings, extradhcpopts), or that places the subject in its
 *   parent (besides the subject it points only at the subject's parent and that parent's children: a port's
 *   IP allocations in its network's subnets) 0.7; any other child 0.5 (one that also points elsewhere ties
 *   the subject to that table: a port's connection to a gateway);
 * - its base table (the attributes every resource keeps in one place) 0.9, since that row is the subject's
 *   own; another table it points at (its parent) 0.65, after the subject's own tables;
 * - two ties away: a table that belongs to its base table (its one FK is part of its key: the tags of the
 *   subject's shared attributes) 0.8, the table at the other end of an association 0.65 (the association
 *   alone is a list of keys: the network's DHCP agents are read through it), a table that belongs to another
 *   parent 0.6, a child named after its parent 0.45 (a migration read with its instance brings the
 *   instance's detail tables);
 * - a table whose name starts with a prefix that many tables share (a plug-in's: cisco_, nsxv_) the question
 *   does not say: half of that; a prefix some other table points at is the application's own (qos_policies,
 *   which qospolicyrbacs points at), since a plug-in's tables point at the core and not the other way.
 * The ties are the declared foreign keys, and the subject's own references that no foreign key declares
 * (subnets.subnetpool_id → subnetpools, inferredJoins.ts); in a schema that declares none, the joins inferred
 * from names. A table so tied that the question reaches only through the subject's own name words (a
 * plug-in's port table matches "port" and joins the other matches) is ranked by its tie alone; one whose own
 * other question words add a tenth of the subject's score or more ranks by the tie plus those words, or its
 * own score when that is more; another subject keeps its own score. When two or more of the subject's
 * neighbours (other subjects aside) already score 70 % of it by question words not in the subject's name,
 * the question has said which of its tables it wants ("including info caches and security groups"): nothing
 * is lifted.
 */
import { stem, termOf } from '../tokens';
import type { SchemaIndex, TableEntry } from './schemaIndex';
import { declaredTargets, isBaseTable, isUnnamedPlugin, joinsOf } from './tableRoles';

const SUBJECT_FLOOR = 0.5;
const SUBJECT_CANDIDATES = 5;
const NAMED_CHILD = 0.9;
const ASSOCIATION = 0.8;
const ASSOCIATION_END = 0.65;
const EXTENSION = 0.7;
const CHILD = 0.5;
const PARENT = 0.65;
const PARENT_OWNED = 0.6;
/** The subject's base table (tableRoles.ts) is its own row kept elsewhere; what belongs to that row is the subject's too. */
const BASE = 0.9;
const BASE_OWNED = 0.8;
/** A child named after the subject's parent: two ties away, after the subject's own children. */
const PARENT_NAMED_CHILD = 0.45;
const MODULE_PREFIX_SHARE = 0.5;
/** Neighbours at this share of a subject's score, this many or more: the question picked them itself. */
const PICKED_SHARE = 0.7;
const PICKED_NEIGHBOURS = 2;
const MIN_STEM = 4;
/** A tied table's own question words (beyond the subject's) count when they add this share of its score. */
const OWN_WORDS_FLOOR = 0.1;

const compact = (name: string) => name.toLowerCase().replace(/[^a-z]/g, '');

const wordsOf = (question: string) =>
  question
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w !== '');

/** The best matches the question names by their whole name, in the order it names them. */
export function namedMatches(index: SchemaIndex, question: string, score: Float64Array): number[] {
  let top = 0;
  for (const s of score) top = Math.max(top, s);
  if (top <= 0) return [];
  const best = [...score.keys()]
    .filter((i) => (score[i] ?? 0) >= SUBJECT_FLOOR * top)
    .sort((a, b) => (score[b] ?? 0) - (score[a] ?? 0))
    .slice(0, SUBJECT_CANDIDATES);
  // An aside in parentheses ("(including info caches, and security groups)") names what to add, not the subject.
  const words = wordsOf(question.replace(/\([^)]*\)/g, ' '));
  /** Stem of a word, or of two adjacent words glued ("floating ip" → floatingip) → where it is first said. */
  const at = new Map<string, number>();
  words.forEach((word, i) => {
    for (const form of [word, word + (words[i + 1] ?? '')]) {
      const s = stem(form);
      if (!at.has(s)) at.set(s, i);
    }
  });
  const position = (e: number) => {
    const entry = index.entries[e];
    return entry ? at.get(stem(compact(entry.table.name))) : undefined;
  };
  return best.filter((e) => position(e) !== undefined).sort((a, b) => (position(a) ?? 0) - (position(b) ?? 0));
}

/** Raises the scores of the subjects' tables (see above) in place. */
export function liftSubjectTables(
  index: SchemaIndex,
  question: string,
  score: Float64Array,
  termScores: ReadonlyMap<number, ReadonlyMap<string, number>>,
): void {
  const before = Float64Array.from(score);
  let top = 0;
  before.forEach((v, i) => {
    if (v > (before[top] ?? 0)) top = i;
  });
  const topSchema = index.entries[top]?.table.schema;
  const subjects = namedMatches(index, question, before);
  const questionTerms = new Set(wordsOf(question).flatMap((w) => termOf(w) ?? []));
  const picked = (e: number) => {
    const own = index.entries[e]?.nameTerms ?? new Set<string>();
    let strong = 0;
    for (const n of index.graph.neighbours(e)) {
      if ((before[n] ?? 0) < PICKED_SHARE * (before[e] ?? 0) || subjects.includes(n)) continue;
      const terms = [...(index.entries[n]?.nameTerms ?? [])];
      if (terms.some((t) => !own.has(t) && questionTerms.has(t))) strong++;
    }
    return strong >= PICKED_NEIGHBOURS;
  };

  // The first subject the question names is what it asks about; the others say which ones ("the port … under
  // network 7"): their own tables are not asked for.
  const first = subjects.find((s) => index.entries[s]?.table.schema === topSchema);
  if (first === undefined) return;
  // The same table in other schemas (databases side by side): the question does not say which one it means.
  const nameOf = (e: number) => stem(compact(index.entries[e]?.table.name ?? ''));
  const heads = subjects.filter((s) => s === first || nameOf(s) === nameOf(first));
  const lifted = new Map<number, number>();
  for (const head of heads) {
    if (picked(head)) continue;
    const shares = new Map<number, number>();
    liftAround(index, head, questionTerms, shares);
    const own = index.entries[head]?.nameTerms ?? new Set<string>();
    const base = before[head] ?? 0;
    for (const [e, share] of shares) {
      let value: number;
      if (subjects.includes(e)) value = Math.max(before[e] ?? 0, share * base);
      else {
        let residual = 0;
        for (const [term, v] of termScores.get(e) ?? []) if (!own.has(term)) residual += v;
        value = residual > OWN_WORDS_FLOOR * base ? Math.max(before[e] ?? 0, share * base + residual) : share * base;
      }
      lifted.set(e, Math.max(lifted.get(e) ?? 0, value));
    }
  }
  for (const [e, value] of lifted) score[e] = value;
}

function liftAround(
  index: SchemaIndex,
  subject: number,
  questionTerms: ReadonlySet<string>,
  shares: Map<number, number>,
): void {
  const entry = index.entries[subject];
  if (!entry) return;
  const lift = (e: number, share: number): void => {
    const other = index.entries[e];
    if (!other || e === subject) return;
    const weight = isUnnamedPlugin(index, other, questionTerms) ? share * MODULE_PREFIX_SHARE : share;
    shares.set(e, Math.max(shares.get(e) ?? 0, weight));
  };
  for (const n of tiesOf(index, subject)) {
    const other = index.entries[n];
    if (!other) continue;
    const joins = joinsOf(index, other);
    const toSubject = joins.filter((j) => j.to === subject);
    if (toSubject.length > 0) {
      const fkColumns = new Set(joins.flatMap((j) => j.columns));
      const association = joins.length >= 2 && other.table.columns.every((c) => fkColumns.has(c.name));
      if (isNamedChild(index, other, subject)) lift(n, NAMED_CHILD);
      else if (association) lift(n, ASSOCIATION);
      else if (
        isLeaf(index, n) &&
        (declaredTargets(index, other).every((t) => t === subject) || placedInParent(index, subject, other))
      )
        lift(n, EXTENSION);
      else lift(n, CHILD);
      if (association) for (const j of joins) if (j.to !== subject) lift(j.to, ASSOCIATION_END);
    }
    if (joinsOf(index, entry).some((j) => j.to === n)) {
      const base = isBaseTable(index, n);
      lift(n, base ? BASE : PARENT);
      for (const m of tiesOf(index, n)) {
        const owned = index.entries[m];
        if (owned?.owners?.includes(n) && joinsOf(index, owned).length === 1) lift(m, base ? BASE_OWNED : PARENT_OWNED);
        if (owned && isNamedChild(index, owned, n)) lift(m, PARENT_NAMED_CHILD);
      }
    }
  }
}

/** `child` points at entry `parent` and its name starts with the parent's (instance_extra, portdnses). */
function isNamedChild(index: SchemaIndex, child: TableEntry, parent: number): boolean {
  const name = index.entries[parent]?.table.name;
  if (name === undefined) return false;
  const parentName = stem(compact(name));
  return (
    parentName.length >= MIN_STEM &&
    compact(child.table.name).startsWith(parentName) &&
    joinsOf(index, child).some((j) => j.to === parent)
  );
}

const tiesCache = new WeakMap<SchemaIndex, Map<number, number[]>>();

/**
 * The entries tied to `e`: its neighbours in the graph the ranking follows, and the entries an inferred join
 * it does not follow ties it to, both ways (a schema that declares some joins and leaves others to the code).
 */
function tiesOf(index: SchemaIndex, e: number): readonly number[] {
  let extra = tiesCache.get(index);
  if (!extra) {
    extra = new Map<number, number[]>();
    const add = (a: number, b: number) => extra?.set(a, [...(extra.get(a) ?? []), b]);
    index.entries.forEach((entry, from) => {
      for (const target of entry.inferred?.values() ?? [])
        if (!target.followed && target.entry !== from) add(from, target.entry);
    });
    tiesCache.set(index, extra);
  }
  const more = extra.get(e);
  return more ? [...new Set([...index.graph.neighbours(e), ...more])] : index.graph.neighbours(e);
}

/**
 * A child of `subject` placed in the subject's parent: besides the subject it points at a parent of the subject
 * (not a base table), and at nothing but such parents and their children (a port's address allocations point at
 * the port, its network and a subnet of that network): the subject's own detail, where it sits.
 */
function placedInParent(index: SchemaIndex, subject: number, child: TableEntry): boolean {
  const entry = index.entries[subject];
  if (!entry) return false;
  const parents = new Set(declaredTargets(index, entry).filter((p) => p !== subject && !isBaseTable(index, p)));
  const others = declaredTargets(index, child).filter((t) => t !== subject);
  const inParent = (t: number) => {
    const target = index.entries[t];
    return parents.has(t) || (target !== undefined && declaredTargets(index, target).some((p) => parents.has(p)));
  };
  return others.some((t) => parents.has(t)) && others.every(inParent);
}

/** No other table points at `e`: a detail of what it points at, not an entity of its own. */
function isLeaf(index: SchemaIndex, e: number): boolean {
  return index.graph.neighbours(e).every((n) => {
    const entry = index.entries[n];
    return n === e || !entry || !declaredTargets(index, entry).includes(e);
  });
}

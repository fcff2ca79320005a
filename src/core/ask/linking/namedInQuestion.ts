/**
 * What a question names outright, and the schema it is about:
 * - a numbered table or schema by its words and number ("table t_12", "t12", "tenant 7", "module 17"): the
 *   tables so named get NAMED_WEIGHT × the idf of the name (one lookup per word–number pair of the question);
 * - a schema by its number or all its words ("tenant 7", "the billing schema"): the question's tables are
 *   taken from it (a group of same tables shows that schema's) and its tables that match get a name's weight;
 * - the schema the question is about: when the matches are spread over schemas (databases loaded side by side,
 *   tenants), each schema's best three direct scores are summed and a table's score is scaled by
 *   FOCUS_FLOOR + (1 − FOCUS_FLOOR) × its schema's sum / the best schema's sum (a table of a schema the question
 *   hardly touches is kept, but below the tables of the schema it is about). Group entries are in every
 *   schema of their group and are not scaled.
 */
import type { SchemaIndex } from '../schemaIndex';
import { numberedKeys } from './numberedNames';

const NAMED_WEIGHT = 12;
const NAMED_SCHEMA_WEIGHT = 4;
const FOCUS_FLOOR = 0.5;
const FOCUS_TOP = 3;

/** Adds the named tables' and schemas' weight to `direct`; returns the schemas the question names. */
export function addNamed(
  index: SchemaIndex,
  question: string,
  questionTerms: ReadonlySet<string>,
  direct: Float64Array,
): Set<string> {
  const n = index.entries.length;
  const named = new Set<string>();
  for (const key of new Set(numberedKeys(question))) {
    const tables = index.numberedTables.get(key);
    if (tables) for (const e of tables) direct[e] = (direct[e] ?? 0) + NAMED_WEIGHT * Math.log(1 + n / tables.length);
    for (const schema of index.numberedSchemas.get(key) ?? []) named.add(schema);
  }
  for (const [schema, terms] of index.schemaTerms) {
    if (terms.length > 0 && terms.every((t) => questionTerms.has(t)) && !/^(?:public)$/.test(schema)) named.add(schema);
  }
  if (named.size === 0) return named;
  index.entries.forEach((entry, e) => {
    if ((direct[e] ?? 0) === 0) return;
    const inNamed = entry.schemas ? entry.schemas.some((s) => named.has(s)) : named.has(entry.table.schema);
    if (inNamed) direct[e] = (direct[e] ?? 0) + NAMED_SCHEMA_WEIGHT;
  });
  return named;
}

/** Scales `direct` toward the schema(s) the question is about (see above); a no-op with one schema. */
export function focusSchemas(index: SchemaIndex, direct: Float64Array, named: ReadonlySet<string>): void {
  const best = new Map<string, number[]>();
  index.entries.forEach((entry, e) => {
    const score = direct[e] ?? 0;
    if (score === 0 || entry.schemas) return;
    const schema = entry.table.schema;
    const top = best.get(schema) ?? [];
    top.push(score);
    top.sort((a, b) => b - a);
    if (top.length > FOCUS_TOP) top.pop();
    best.set(schema, top);
  });
  if (best.size < 2) return;
  const mass = new Map([...best].map(([s, top]) => [s, top.reduce((a, b) => a + b, 0)]));
  let most = 0;
  for (const [s, m] of mass) most = Math.max(most, named.has(s) ? Infinity : m);
  if (most === Infinity)
    for (const s of named) mass.set(s, (most = Math.max(...[...mass.values()].filter(Number.isFinite))));
  if (most <= 0) return;
  index.entries.forEach((entry, e) => {
    if (entry.schemas || (direct[e] ?? 0) === 0) return;
    const ratio = Math.min(1, (mass.get(entry.table.schema) ?? 0) / most);
    direct[e] = (direct[e] ?? 0) * (FOCUS_FLOOR + (1 - FOCUS_FLOOR) * ratio);
  });
}

/** The schema a group entry is shown in: the first of its schemas the question names, else its own. */
export function shownSchema(schemas: readonly string[] | undefined, named: ReadonlySet<string>): string | undefined {
  return schemas?.find((s) => named.has(s));
}

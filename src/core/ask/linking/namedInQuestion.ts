/**
 * What a question names outright, and the schema it is about:
 * - a numbered table or schema by its words and number ("table t_12", "t12", "tenant 7", "module 17"): the
 *   tables so named get NAMED_WEIGHT × the idf of the name (one lookup per word–number pair of the question);
 * - a schema by its number or all its words ("tenant 7", "the billing schema"): the question's tables are
 *   taken from it (a group of same tables shows that schema's) and its tables that match get a name's weight;
 * - the schema the question is about: when the matches are spread over schemas (databases loaded side by side),
 *   each schema's coverage is the idf sum of the question terms any of its tables matches, and a table's
 *   score is scaled by FOCUS_FLOOR + (1 − FOCUS_FLOOR) × its schema's coverage / the best coverage (a table of a
 *   schema that speaks of less of the question is kept, but below those of the schema that speaks of most of
 *   it); a named schema counts as the best. Group entries are in every schema of their group, never scaled.
 */
import type { SchemaIndex } from './schemaIndex';
import { numberedKeys } from './numberedNames';

const NAMED_WEIGHT = 12;
const NAMED_SCHEMA_WEIGHT = 4;
const FOCUS_FLOOR = 0.5;

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
export function focusSchemas(
  index: SchemaIndex,
  direct: Float64Array,
  named: ReadonlySet<string>,
  coverage: ReadonlyMap<string, number>,
): void {
  if (coverage.size < 2) return;
  let most = 0;
  for (const c of coverage.values()) most = Math.max(most, c);
  if (most <= 0) return;
  index.entries.forEach((entry, e) => {
    if (entry.schemas || (direct[e] ?? 0) === 0) return;
    const schema = entry.table.schema;
    const ratio = named.has(schema) ? 1 : Math.min(1, (coverage.get(schema) ?? 0) / most);
    direct[e] = (direct[e] ?? 0) * (FOCUS_FLOOR + (1 - FOCUS_FLOOR) * ratio);
  });
}

/** The schema a group entry is shown in: the first of its schemas the question names, else its own. */
export function shownSchema(schemas: readonly string[] | undefined, named: ReadonlySet<string>): string | undefined {
  return schemas?.find((s) => named.has(s));
}

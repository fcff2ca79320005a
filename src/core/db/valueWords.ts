/**
 * Words of the values a text column holds, as the planner's statistics already know them (pg_stats' most
 * common values and histogram bounds): no table is read, and pg_stats only shows columns the user may read.
 * They let "jazz" find genre.name; they are never shown to a model.
 */
import type { TableInfo } from '../../shared/schema';
import { ownColumns } from './sharedColumns';
import { parseArrayLiteral } from './valueEncoding';

/** Above this many distinct values a column is free text: its histogram bounds are not read. */
const MAX_HISTOGRAM_DISTINCT = 500;

const USER_RELATIONS = `
  c.relkind IN ('r', 'p', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_%'`;

/**
 * One query for the whole database. Its cost is pg_stats itself (a privilege check per analyzed column),
 * so nothing else is joined: the string columns are picked afterwards from the column types. Histogram
 * bounds are read only for columns with few distinct values (categories, not free text, whose bounds are
 * random words).
 */
// n_distinct > 0 is a count; < 0 is minus a fraction of the rows.
const FEW_DISTINCT = `(s.n_distinct BETWEEN 1 AND ${MAX_HISTOGRAM_DISTINCT} OR (s.n_distinct < 0 AND -s.n_distinct * c.reltuples <= ${MAX_HISTOGRAM_DISTINCT}))`;

export const VALUE_STATS_SQL = `
SELECT c.oid::int8::text AS oid, s.attname AS name, s.most_common_vals::text AS mcv,
       CASE WHEN ${FEW_DISTINCT} THEN s.histogram_bounds::text END AS hist
FROM pg_stats s
JOIN pg_namespace n ON n.nspname = s.schemaname
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
WHERE (s.most_common_vals IS NOT NULL OR ${FEW_DISTINCT}) AND ${USER_RELATIONS}`;

/** Types whose values are words: text, varchar, char, citext, name (and arrays of them are not). */
const STRING_TYPE = /^(?:text|character varying|character|citext|name)(?:\(\d+\))?$/;

export interface StatsRow {
  oid: string;
  name: string;
  mcv: string | null;
  hist: string | null;
}

/** Words kept per column: enough for categories (genres, countries, statuses), bounded for free text. */
export const MAX_VALUE_WORDS = 40;
const MAX_WORD_CHARS = 30;

export function attachValueWords(byOid: ReadonlyMap<string, TableInfo>, rows: readonly StatsRow[]): void {
  for (const row of rows) {
    const table = byOid.get(row.oid);
    const at = table ? table.columns.findIndex((c) => c.name === row.name) : -1;
    const found = table?.columns[at];
    if (!table || !found || !STRING_TYPE.test(found.type)) continue;
    const words = new Set<string>();
    for (const literal of [row.mcv, row.hist]) {
      if (!literal) continue;
      for (const value of parseArrayLiteral(literal)) {
        if (typeof value !== 'string') continue;
        for (const word of value.toLowerCase().split(/[^\p{L}]+/u)) {
          if (word.length >= 2 && word.length <= MAX_WORD_CHARS) words.add(word);
          if (words.size >= MAX_VALUE_WORDS) break;
        }
        if (words.size >= MAX_VALUE_WORDS) break;
      }
    }
    // A column list several tables share is frozen: this table's own copy takes the words.
    const column = words.size > 0 ? ownColumns(table)[at] : undefined;
    if (column) column.valueWords = [...words];
  }
}

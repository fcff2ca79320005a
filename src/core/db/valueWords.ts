/**
 * Words of the values a text column holds, as the planner's statistics already know them (pg_stats' most
 * common values and histogram bounds): no table is read, and pg_stats only shows columns the user may read.
 * They let "jazz" find genre.name; they are never shown to a model.
 */
import type { TableInfo } from '../../shared/schema';
import { parseArrayLiteral } from '../sql/valueEncoding';

const USER_RELATIONS = `
  c.relkind IN ('r', 'p', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_%'`;

/** One query for the whole database; string-category columns only (text, varchar, char, citext, name). */
export const VALUE_STATS_SQL = `
SELECT c.oid::int8::text AS oid, s.attname AS name, s.most_common_vals::text AS mcv, s.histogram_bounds::text AS hist
FROM pg_stats s
JOIN pg_namespace n ON n.nspname = s.schemaname
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = s.attname
JOIN pg_type t ON t.oid = a.atttypid
WHERE t.typcategory = 'S' AND (s.most_common_vals IS NOT NULL OR s.histogram_bounds IS NOT NULL) AND ${USER_RELATIONS}`;

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
    const column = byOid.get(row.oid)?.columns.find((c) => c.name === row.name);
    if (!column) continue;
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
    if (words.size > 0) column.valueWords = [...words];
  }
}

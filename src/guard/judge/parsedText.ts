/**
 * A Parse message's text as PostgreSQL's grammar reads it, kept for the few texts seen last: what transaction
 * control it holds and where its `$n` stand (transactionControl.ts, boundSql.ts) are read from one parse, and
 * the Bind of a held statement finds it again. The trees are read, never changed. Texts longer than
 * MAX_TEXT are parsed each time and not kept.
 */
import { parseSql } from '../../core/sql/parse';
import type { ParsedInput } from '../../core/sql/parse';

const MAX_ENTRIES = 64;
const MAX_TEXT = 4000;
const entries = new Map<string, ParsedInput>();

/** parseSql(sql) (throws like it; the parser must be loaded), from the last texts when it is one of them. */
export function parsedText(sql: string): ParsedInput {
  const known = entries.get(sql);
  if (known) {
    entries.delete(sql);
    entries.set(sql, known);
    return known;
  }
  const parsed = parseSql(sql);
  if (sql.length <= MAX_TEXT) {
    entries.set(sql, parsed);
    if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  }
  return parsed;
}

/**
 * Two-stage linking for schemas bigger than the context budget: first a compact list (one short line per
 * table, most likely first, as many as the budget holds) from which the model picks the tables a question
 * needs; then the detailed context is built around its picks. And the lookups the SQL step may ask for
 * when something it needs is missing (describe_table, find_tables), instead of guessing.
 */
import type { SchemaSnapshot } from '../../shared/schema';
import { describeTables, rankedEntries } from './schemaContext';
import type { TableEntry } from './linking/schemaIndex';
import { displayName } from './linking/schemaIndex';

const COMMENT_CHARS = 60;
const LISTED_COLUMNS = 5;
/** Tables find_tables returns at most. */
export const FIND_LIMIT = 10;

export interface CompactList {
  text: string;
  /** Entries listed (a family is one). */
  listed: number;
  /** Entries in the whole schema. */
  total: number;
}

/** One line per table: its name, then its comment or its first columns; a family says how many it holds. */
export function compactLine(entry: TableEntry): string {
  const { table, members } = entry;
  const family = members ? ` (+${members.length - 1} like it)` : '';
  const comment = table.comment?.replace(/\s+/g, ' ').trim();
  const detail = comment
    ? ` -- ${comment.length > COMMENT_CHARS ? `${comment.slice(0, COMMENT_CHARS - 1)}…` : comment}`
    : `: ${table.columns
        .slice(0, LISTED_COLUMNS)
        .map((c) => c.name)
        .join(', ')}${table.columns.length > LISTED_COLUMNS ? ', …' : ''}`;
  return `${displayName(table.schema, table.name)}${family}${detail}`;
}

/** The compact list for `question`, best first, cut to `budgetTokens`. */
export function compactSchemaList(snapshot: SchemaSnapshot, question: string, budgetTokens: number): CompactList {
  const entries = rankedEntries(snapshot, question, true);
  const lines: string[] = [];
  let chars = 0;
  for (const entry of entries) {
    const line = compactLine(entry);
    // estimateTokens counts characters / 4: the list so far plus this line and its newline.
    if (Math.ceil((chars + line.length + 1) / 4) > budgetTokens) break;
    lines.push(line);
    chars += line.length + 1;
  }
  return { text: lines.join('\n'), listed: lines.length, total: entries.length };
}

/** describe_table: the full definitions of the named tables, and the names that matched none. */
export function describeTablesText(
  snapshot: SchemaSnapshot,
  names: readonly string[],
): { text: string; found: string[] } {
  const { blocks, tables, unknown } = describeTables(snapshot, names);
  const notFound = unknown.length > 0 ? `\nNo table named: ${unknown.join(', ')} (find_tables searches by words).` : '';
  return { text: `${blocks.join('\n')}${notFound}`.trim(), found: tables.map((t) => `${t.schema}.${t.name}`) };
}

/** find_tables: the tables whose names, columns, comments or values best match the words, one compact line each. */
export function findTablesText(snapshot: SchemaSnapshot, words: string): string {
  const lines = rankedEntries(snapshot, words, false).slice(0, FIND_LIMIT).map(compactLine);
  return lines.join('\n');
}

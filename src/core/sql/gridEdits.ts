/**
 * The results grid's edits as one write (issue 33): DELETEs, then UPDATEs, then INSERTs, each row found by its
 * primary key and, for optimistic concurrency, by the values it had when it was read (the edited columns of an
 * update, every comparable column of a delete), so a row changed since then matches nothing and the preview
 * shows fewer rows than were edited. Values are literals PostgreSQL coerces to the column's type by assignment
 * (no explicit cast: `'…'::varchar(5)` would cut a long value where assignment refuses it); text is quoted by
 * the standard rules (E'' with doubled backslashes when it holds one, so `standard_conforming_strings` does not
 * matter); NUL and broken Unicode are refused.
 */
import type { CellInput, GridEdit } from '../../shared/gridEditProtocol';
import { inputText } from '../../shared/gridValues';
import { qualifiedName, quoteIdent } from '../../shared/sqlNames';
import { AgentError } from '../platform/errors';

/** The table a single-table read shows, and which table column each result column is (null: not one). */
export interface EditTarget {
  schema: string;
  table: string;
  primaryKey: string[];
  columns: ({ name: string; type: string } | null)[];
}

export interface BuiltEdits {
  sql: string;
  /** Rows of the table itself each kind of statement should change (more or fewer in the preview: a conflict). */
  expected: { updated: number; inserted: number; deleted: number };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const PLAIN_NUMBER = /^-?\d{1,1000}(\.\d{1,1000})?$/;
/**
 * Exact number types take a bare number. Not real/double precision: a bare `0.1` is numeric, and a real column's
 * 0.1 widened to compare with it is not equal; a quoted '0.1' is read as the column's own type.
 */
const NUMBER_TYPE = /^(smallint|integer|bigint|numeric|decimal)(\(|$)/;
/** Types without an equality operator: their read values cannot tell whether the row changed. */
const NOT_COMPARABLE = /^(json|xml|point|line|lseg|box|path|polygon|circle)(\[\])*$/;

const bad = (message: string, advice?: string) => new AgentError('BAD_INPUT', message, advice);

/** A string literal, whatever `standard_conforming_strings` is. */
export function quoteLiteral(text: string): string {
  if (text.includes('\u0000'))
    throw bad('A value holds a NUL character (\\0), which PostgreSQL cannot store in text.', 'Remove it and retry.');
  if (LONE_SURROGATE.test(text)) throw bad('A value holds broken Unicode (a lone surrogate).', 'Retype the value.');
  const quoted = text.replace(/'/g, "''");
  return text.includes('\\') ? `E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

/** A value of a column of `type` as SQL: NULL, a bare number or boolean where the type takes one, else a string literal. */
export function literal(value: string | null, type: string): string {
  if (value === null) return 'NULL';
  if (NUMBER_TYPE.test(type) && PLAIN_NUMBER.test(value)) return value;
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value;
  return quoteLiteral(value);
}

const inputOf = (cell: CellInput): string | null => ('null' in cell ? null : cell.text);

export function buildGridEdits(target: EditTarget, rows: readonly unknown[][], edits: readonly GridEdit[]): BuiltEdits {
  if (edits.length === 0) throw bad('There are no changes to review.');
  if (target.primaryKey.length === 0) throw bad(`${target.table} has no primary key: its rows cannot be edited.`);
  const pkIndex = target.primaryKey.map((name) => {
    const i = target.columns.findIndex((c) => c?.name === name);
    if (i < 0) throw bad(`The result does not show the primary key column ${name}: its rows cannot be edited.`);
    return i;
  });
  const table = qualifiedName(target.schema, target.table);
  const column = (i: number) => {
    const c = target.columns[i];
    if (!c) throw bad(`Result column ${i + 1} is not a column of ${target.table}: it cannot be edited.`);
    return c;
  };
  const original = (row: number) => {
    const values = rows[row];
    if (!values) throw bad(`There is no row ${row + 1} in this result.`);
    return values;
  };
  /** `col = value` with the value as read (IS NULL for NULL). */
  const matches = (values: readonly unknown[], i: number) => {
    const c = column(i);
    const text = inputText(values[i]);
    return text === null ? `${quoteIdent(c.name)} IS NULL` : `${quoteIdent(c.name)} = ${literal(text, c.type)}`;
  };
  const keyOf = (row: number) => {
    const values = original(row);
    for (const i of pkIndex)
      if (inputText(values[i]) === null) throw bad(`Row ${row + 1} has no primary key value: it cannot be edited.`);
    return pkIndex.map((i) => matches(values, i));
  };

  const touched = new Set<number>();
  const once = (row: number) => {
    if (touched.has(row)) throw bad(`Row ${row + 1} is changed twice (edited and deleted, or edited twice).`);
    touched.add(row);
  };
  const deletes: string[] = [];
  const updates: string[] = [];
  const inserts: string[] = [];
  for (const edit of edits) {
    if (edit.kind === 'delete') {
      once(edit.row);
      const values = original(edit.row);
      const others = target.columns
        .map((c, i) => ({ c, i }))
        .filter(({ c, i }) => c !== null && !pkIndex.includes(i) && !NOT_COMPARABLE.test(c.type))
        .map(({ i }) => matches(values, i));
      deletes.push(`DELETE FROM ${table} WHERE ${[...keyOf(edit.row), ...others].join(' AND ')};`);
    } else if (edit.kind === 'update') {
      once(edit.row);
      const values = original(edit.row);
      const seen = new Set<number>();
      const set: string[] = [];
      const read: string[] = [];
      for (const cell of edit.cells) {
        if (seen.has(cell.column)) throw bad(`Row ${row1(edit.row)} sets column ${cell.column + 1} twice.`);
        seen.add(cell.column);
        const c = column(cell.column);
        set.push(`${quoteIdent(c.name)} = ${literal(inputOf(cell.value), c.type)}`);
        if (!pkIndex.includes(cell.column) && !NOT_COMPARABLE.test(c.type)) read.push(matches(values, cell.column));
      }
      updates.push(`UPDATE ${table} SET ${set.join(', ')} WHERE ${[...keyOf(edit.row), ...read].join(' AND ')};`);
    } else {
      const seen = new Set<number>();
      const names: string[] = [];
      const given: string[] = [];
      for (const cell of edit.cells) {
        if (seen.has(cell.column)) throw bad(`A new row sets column ${cell.column + 1} twice.`);
        seen.add(cell.column);
        const c = column(cell.column);
        names.push(quoteIdent(c.name));
        given.push(literal(inputOf(cell.value), c.type));
      }
      inserts.push(
        names.length === 0
          ? `INSERT INTO ${table} DEFAULT VALUES;`
          : `INSERT INTO ${table} (${names.join(', ')}) VALUES (${given.join(', ')});`,
      );
    }
  }
  return {
    sql: [...deletes, ...updates, ...inserts].join('\n'),
    expected: { updated: updates.length, inserted: inserts.length, deleted: deletes.length },
  };
}

const row1 = (row: number) => row + 1;

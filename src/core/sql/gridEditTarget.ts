/**
 * Whether a read's rows can be edited (issue 33), read from its parse tree and the schema snapshot: one plain
 * SELECT of one table with a primary key (no join, grouping, DISTINCT, set operation, CTE or function in FROM),
 * each result column a column of that table or an expression (not editable), and every primary key column
 * shown. Anything else says why not, in words a person can act on.
 */
import type { SchemaSnapshot } from '../../shared/schema';
import { qualifiedName } from '../../shared/sqlNames';
import type { EditTarget } from './gridEdits';
import { parseSql } from './parse';
import { arr, isRec, rec, str } from './parseTree';

export type EditTargetResult = { ok: true; target: EditTarget } | { ok: false; reason: string };

const no = (reason: string): EditTargetResult => ({ ok: false, reason });

/** `fields`: the result's columns as the read returned them (their names are checked against the table's). */
export function gridEditTarget(
  sql: string,
  snapshot: SchemaSnapshot,
  fields: readonly { name: string }[],
): EditTargetResult {
  const parsed = parseSql(sql);
  const only = parsed.statements.length === 1 ? parsed.statements[0] : undefined;
  const select = only?.kind === 'SelectStmt' ? rec(only.tree, 'SelectStmt') : undefined;
  if (!select) return no('Only the rows of one SELECT can be edited.');
  if (str(select, 'op') !== undefined && str(select, 'op') !== 'SETOP_NONE')
    return no('The rows of a UNION, INTERSECT or EXCEPT cannot be edited.');
  for (const [key, what] of [
    ['withClause', 'a WITH query'],
    ['distinctClause', 'DISTINCT'],
    ['groupClause', 'GROUP BY'],
    ['havingClause', 'HAVING'],
    ['windowClause', 'WINDOW'],
    ['valuesLists', 'VALUES'],
    ['intoClause', 'INTO'],
  ] as const)
    if (select[key] !== undefined) return no(`The rows of a read with ${what} cannot be edited.`);
  const from = arr(select, 'fromClause');
  const range = from.length === 1 ? rec(from[0], 'RangeVar') : undefined;
  if (!range) return no('Only the rows of a read of one table (no join, subquery or function) can be edited.');
  const relname = str(range, 'relname') ?? '';
  const schemaname = str(range, 'schemaname');
  const alias = str(rec(range, 'alias'), 'aliasname');
  const candidates = snapshot.tables.filter((t) => t.name === relname && (schemaname ?? t.schema) === t.schema);
  if (candidates.length > 1)
    return no(`More than one schema has a table ${relname}: name its schema (FROM schema.${relname}) to edit.`);
  const table = candidates[0];
  if (!table) return no(`${relname} is not a table of the schema as last read (refresh the Schema view).`);
  const shown = qualifiedName(table.schema, table.name);
  if (table.kind !== 'table' && table.kind !== 'partitioned_table')
    return no(`${shown} is a ${table.kind.replace('_', ' ')}: only a table's rows can be edited.`);
  if (!table.primaryKey || table.primaryKey.length === 0)
    return no(`${shown} has no primary key: its rows cannot be told apart, so they cannot be edited.`);
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const qualifiers = new Set([table.name, alias, `${table.schema}.${table.name}`].filter((q) => q !== undefined));

  const columns: EditTarget['columns'] = [];
  /** The name each result column should have (null: an expression, any name). */
  const names: (string | null)[] = [];
  for (const item of arr(select, 'targetList')) {
    const target = rec(item, 'ResTarget');
    const ref = rec(target?.['val'], 'ColumnRef');
    const parts = ref ? arr(ref, 'fields') : [];
    const last = parts.at(-1);
    const qualifier = parts
      .slice(0, -1)
      .map((p) => str(rec(p, 'String'), 'sval') ?? '')
      .join('.');
    if (!ref || (qualifier !== '' && !qualifiers.has(qualifier))) {
      columns.push(null);
      names.push(null);
      continue;
    }
    if (isRec(last) && 'A_Star' in last) {
      for (const c of table.columns) {
        columns.push({ name: c.name, type: c.type });
        names.push(c.name);
      }
      continue;
    }
    const column = byName.get(str(rec(last, 'String'), 'sval') ?? '');
    columns.push(column ? { name: column.name, type: column.type } : null);
    names.push(column ? (str(target, 'name') ?? column.name) : null);
  }
  const missing = table.primaryKey.filter((k) => !columns.some((c) => c?.name === k));
  if (missing.length > 0)
    return no(`The result does not show ${shown}'s primary key (${missing.join(', ')}): add it to the SELECT to edit.`);
  if (columns.length !== fields.length || names.some((n, i) => n !== null && n !== fields[i]?.name))
    return no('The result does not match the table as last read (refresh the Schema view, then run the read again).');
  return { ok: true, target: { schema: table.schema, table: table.name, primaryKey: table.primaryKey, columns } };
}

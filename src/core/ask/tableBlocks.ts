/**
 * One table as the model is shown it: `orders(id bigint pk, customer_id bigint → customers.id) -- comment`,
 * whole or with only some columns (the rest counted), with enum labels, CHECK literals and its family.
 */
import type { ColumnInfo } from '../../shared/schema';
import type { TableEntry } from './linking/schemaIndex';
import { displayName, fkTextOf, keyOf } from './linking/schemaIndex';

const MAX_COMMENT_CHARS = 100;
const MAX_RENDERED_VALUES = 8;
const MAX_RENDERED_MEMBERS = 3;

/** The whole block of a table (every column), rendered once per entry. */
export function fullBlockOf(entry: TableEntry): string {
  return (entry.fullBlock ??= renderBlock(entry, entry.table.columns, 0));
}

/** The block with `columns` only, saying how many were `omitted`. */
export function renderBlock(entry: TableEntry, columns: readonly ColumnInfo[], omitted: number): string {
  const { table } = entry;
  const pk = new Set(table.primaryKey ?? []);
  const parts = columns.map((c) => {
    const target = entry.fkTargets.get(c.name) ?? entry.inferred?.get(c.name)?.text;
    return `${c.name} ${shortType(c.type)}${pk.has(c.name) ? ' pk' : ''}${target ? ` → ${target}` : ''}${allowedText(c)}${c.comment ? ` /* ${clip(c.comment)} */` : ''}`;
  });
  const included = new Set(columns.map((c) => c.name));
  for (const fk of table.foreignKeys) {
    if (fk.columns.length > 1 && fk.columns.every((c) => included.has(c))) {
      parts.push(
        `(${fk.columns.join(', ')}) → ${displayName(fk.references.schema, fk.references.table)}(${fk.references.columns.join(', ')})`,
      );
    }
  }
  if (omitted > 0) parts.push(`… ${omitted} more column${omitted === 1 ? '' : 's'}`);
  const kind = table.kind === 'table' || table.kind === 'partitioned_table' ? '' : `${table.kind.replace('_', ' ')} `;
  return `${kind}${displayName(table.schema, table.name)}(${parts.join(', ')})${table.comment ? ` -- ${clip(table.comment)}` : ''}${familyText(entry)}`;
}

/** Enum labels and CHECK literals are schema, not data: the model needs their exact spelling in a WHERE. */
function allowedText(column: ColumnInfo): string {
  const values = column.allowedValues;
  if (!values || values.length === 0) return '';
  const shown = values.slice(0, MAX_RENDERED_VALUES).map((v) => `'${clip(v, 24).replaceAll("'", "''")}'`);
  return ` in (${shown.join(', ')}${values.length > MAX_RENDERED_VALUES ? ', …' : ''})`;
}

/**
 * One block for a family: its other members named (a few) and counted, so the model knows to query them; for
 * a group, the schemas that have the same table (the one shown first).
 */
function familyText(entry: TableEntry): string {
  const others = (entry.members ?? []).slice(1);
  const kind = entry.table.kind === 'partitioned_table' ? 'partitions' : 'same columns';
  const family = others.length === 0 ? '' : ` -- ${kind}: ${listed(others)}`;
  const schemas = (entry.schemas ?? []).filter((s) => s !== entry.table.schema);
  const group =
    schemas.length === 0
      ? ''
      : ` -- the same table in ${schemas.length + 1} schemas: ${entry.table.schema}, ${listed(schemas)}`;
  return family + group;
}

function listed(names: readonly string[]): string {
  const named = names.slice(0, MAX_RENDERED_MEMBERS).join(', ');
  return `${named}${names.length > MAX_RENDERED_MEMBERS ? ` and ${names.length - MAX_RENDERED_MEMBERS} more` : ''}`;
}

/** A group's entry as seen from one of its schemas (the one a question names): that schema's table and keys. */
export function entryInSchema(entry: TableEntry, schema: string | undefined): TableEntry {
  const at = schema === undefined ? -1 : (entry.schemas ?? []).indexOf(schema);
  const table = entry.groupTables?.[at];
  if (at <= 0 || !table) return entry;
  const { fullBlock: _cached, ...rest } = entry;
  return { ...rest, table, key: keyOf(table.schema, table.name), ...fkTextOf(table) };
}

const TYPE_ABBREVIATIONS: readonly [RegExp, string][] = [
  [/^timestamp(\(\d+\))? with time zone/, 'timestamptz$1'],
  [/^timestamp(\(\d+\))? without time zone/, 'timestamp$1'],
  [/^time(\(\d+\))? without time zone/, 'time$1'],
  [/^character varying/, 'varchar'],
  [/^integer/, 'int'],
  [/^boolean/, 'bool'],
];

const shortTypes = new Map<string, string>();

function shortType(type: string): string {
  let short = shortTypes.get(type);
  if (short === undefined) {
    const rule = TYPE_ABBREVIATIONS.find(([pattern]) => pattern.test(type));
    short = rule ? type.replace(rule[0], rule[1]) : type;
    if (shortTypes.size < 10_000) shortTypes.set(type, short);
  }
  return short;
}

function clip(comment: string, max = MAX_COMMENT_CHARS): string {
  const flat = comment.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

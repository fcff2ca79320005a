/**
 * Columns, constraints, indexes and triggers of one chunk of relations (introspect.ts reads the relations and
 * calls this per chunk). Rows come as text and are read by position; each deparsing function runs once per
 * distinct input (a type and modifier, a default's tree, an index that is not plain), never once per row.
 */
import type { ColumnInfo, ReferentialAction, TableInfo } from '../../shared/schema';
import type { DbSession } from './db';
import { plainIndexDefinition, type KeyColumn, type ServerNaming } from './indexDefinition';
import {
  COLUMNS_SQL,
  CONSTRAINTS_SQL,
  DEFAULTS_SQL,
  EXPRESSIONS_SQL,
  INDEX_DEFINITIONS_SQL,
  indexesSql,
  textRows,
  TRIGGERS_SQL,
  TYPE_NAMES_SQL,
  type ColumnRow,
  type ConstraintRow,
  type DefaultRow,
  type IndexRow,
  type TriggerRow,
} from './introspectQueries';

const ACTIONS: Record<string, ReferentialAction> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

/** Enum labels and CHECK literals kept per column at most (a 200-label enum is a lookup table, not a hint). */
const MAX_ALLOWED_VALUES = 30;

/** One copy of each repeated string. */
export class Interner {
  private readonly strings = new Map<string, string>();
  of(value: string): string;
  of(value: string | null): string | null;
  of(value: string | null): string | null {
    if (value === null) return null;
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    this.strings.set(value, value);
    return value;
  }
}

/** What the chunks share: names and facts read once, and foreign keys whose target columns are named last. */
export interface IntrospectState {
  byOid: ReadonlyMap<string, TableInfo>;
  enumLabels: ReadonlyMap<string, string[]>;
  strings: Interner;
  naming: ServerNaming;
  /** The server has pg_index.indnullsnotdistinct (15+). */
  nullsNotDistinct: boolean;
  /** format_type by `<type oid> <modifier>`. */
  typeNames: Map<string, string>;
  /** pg_get_expr by the default's tree without its source positions (a tree with a column in it: per table). */
  expressions: Map<string, string | null>;
  columnNames: Map<string, string[]>;
  pending: { columns: string[]; oid: string; nums: readonly number[] }[];
}

const intArray = (text: string | null): number[] =>
  text && text.length > 2 ? text.slice(1, -1).split(',').map(Number) : [];

/** Columns, constraints, indexes and triggers of one chunk of relations, attached to their tables. */
export async function readChunk(session: DbSession, chunk: readonly string[], state: IntrospectState): Promise<void> {
  const keyColumns = await readColumns(session, chunk, state);
  await readConstraints(session, chunk, state);
  await readIndexes(session, chunk, state, keyColumns);
  for (const [oid, name, enabled, definition] of await textRows<TriggerRow>(session, TRIGGERS_SQL, [chunk])) {
    state.byOid.get(oid)?.triggers.push({ name, enabled: enabled === 't', definition });
  }
}

/** The chunk's columns; returns their facts by table and attnum, for the index definitions. */
async function readColumns(
  session: DbSession,
  chunk: readonly string[],
  state: IntrospectState,
): Promise<Map<string, Map<number, KeyColumn>>> {
  const { strings, typeNames, columnNames } = state;
  const defaults = await readDefaults(session, chunk, state);
  const rows = await textRows<ColumnRow>(session, COLUMNS_SQL, [chunk]);
  const missing = new Map<string, [string, string]>();
  for (const [, , , typeOid, typmod] of rows) {
    const key = `${typeOid} ${typmod}`;
    if (!typeNames.has(key)) missing.set(key, [typeOid, typmod]);
  }
  if (missing.size > 0) {
    const pairs = [...missing.values()];
    const names = await session.queryText(TYPE_NAMES_SQL, [pairs.map((p) => p[0]), pairs.map((p) => p[1])]);
    pairs.forEach(([t, m], i) => typeNames.set(`${t} ${m}`, strings.of(names.rows[i]?.[0] ?? '???')));
  }
  const keyColumns = new Map<string, Map<number, KeyColumn>>();
  for (const [oid, num, name, typeOid, typmod, notNull, comment, collation] of rows) {
    const table = state.byOid.get(oid);
    if (!table) continue;
    const column: ColumnInfo = {
      name: strings.of(name),
      type: typeNames.get(`${typeOid} ${typmod}`) ?? '???',
      nullable: notNull !== 't',
      default: defaults.get(`${oid} ${num}`) ?? null,
      comment,
    };
    const labels = state.enumLabels.get(typeOid);
    if (labels) column.allowedValues = labels.slice(0, MAX_ALLOWED_VALUES);
    table.columns.push(column);
    let names = columnNames.get(oid);
    if (!names) columnNames.set(oid, (names = []));
    names[Number(num)] = column.name;
    let keys = keyColumns.get(oid);
    if (!keys) keyColumns.set(oid, (keys = new Map()));
    keys.set(Number(num), { name: column.name, typeOid, collation });
  }
  return keyColumns;
}

/** A default's tree, where it was written left out: trees that differ only there deparse the same. */
const SOURCE_POSITION = / :location -?\d+(?=[ }])/g;

/** The chunk's defaults by `<oid> <attnum>`, each distinct tree deparsed once. */
async function readDefaults(
  session: DbSession,
  chunk: readonly string[],
  state: IntrospectState,
): Promise<Map<string, string | null>> {
  const rows = await textRows<DefaultRow>(session, DEFAULTS_SQL, [chunk]);
  const shapes: [string, string][] = [];
  const wanted = new Map<string, [string, string]>();
  for (const [oid, num, tree] of rows) {
    const bare = tree.replace(SOURCE_POSITION, '');
    // A column in the tree is named from its table: such a tree is deparsed per table.
    const shape = bare.includes('{VAR ') ? `${oid} ${bare}` : bare;
    shapes.push([`${oid} ${num}`, shape]);
    if (!state.expressions.has(shape) && !wanted.has(shape)) wanted.set(shape, [oid, num]);
  }
  if (wanted.size > 0) {
    const at = [...wanted.values()];
    const texts = await session.queryText(EXPRESSIONS_SQL, [at.map((a) => a[0]), at.map((a) => a[1])]);
    [...wanted.keys()].forEach((shape, i) =>
      state.expressions.set(shape, state.strings.of(texts.rows[i]?.[0] ?? null)),
    );
  }
  return new Map(shapes.map(([column, shape]) => [column, state.expressions.get(shape) ?? null]));
}

async function readConstraints(session: DbSession, chunk: readonly string[], state: IntrospectState): Promise<void> {
  const names = (oid: string, nums: readonly number[]) => nums.map((n) => state.columnNames.get(oid)?.[n] ?? `#${n}`);
  const rows = await textRows<ConstraintRow>(session, CONSTRAINTS_SQL, [chunk]);
  for (const [oid, name, type, conkey, refSchema, refTable, refOid, confkey, onDelete, onUpdate, definition] of rows) {
    const table = state.byOid.get(oid);
    if (!table) continue;
    const columns = names(oid, intArray(conkey));
    if (type === 'p') table.primaryKey = columns;
    else if (type === 'c') attachCheckLiterals(table, columns, definition);
    else if (type === 'u') table.uniqueConstraints.push(columns);
    else {
      const refColumns: string[] = [];
      state.pending.push({ columns: refColumns, oid: refOid, nums: intArray(confkey) });
      table.foreignKeys.push({
        name,
        columns,
        references: { schema: state.strings.of(refSchema ?? '?'), table: refTable ?? '?', columns: refColumns },
        onDelete: ACTIONS[onDelete] ?? 'NO ACTION',
        onUpdate: ACTIONS[onUpdate] ?? 'NO ACTION',
      });
    }
  }
}

async function readIndexes(
  session: DbSession,
  chunk: readonly string[],
  state: IntrospectState,
  keyColumns: ReadonlyMap<string, ReadonlyMap<number, KeyColumn>>,
): Promise<void> {
  const rows = await textRows<IndexRow>(session, indexesSql(state.nullsNotDistinct), [chunk]);
  const unwritten: { index: { definition: string }; oid: string }[] = [];
  for (const [oid, name, unique, primary, indexOid, am, amOid, keys, classes, collations, definition] of rows) {
    const table = state.byOid.get(oid);
    if (!table) continue;
    const index = { name, unique: unique === 't', primary: primary === 't', definition: definition ?? '' };
    if (definition === null) {
      const written = plainIndexDefinition(
        state.naming,
        {
          name: index.name,
          unique: index.unique,
          schema: table.schema,
          table: table.name,
          am,
          amOid,
          keys,
          classes,
          collations,
        },
        keyColumns.get(oid),
      );
      if (written === undefined) unwritten.push({ index, oid: indexOid });
      else index.definition = written;
    }
    table.indexes.push(index);
  }
  if (unwritten.length > 0) {
    const texts = await session.queryText(INDEX_DEFINITIONS_SQL, [unwritten.map((u) => u.oid)]);
    unwritten.forEach((u, i) => (u.index.definition = texts.rows[i]?.[0] ?? ''));
  }
}

/** String literals of a CHECK constraint (`status = ANY (ARRAY['paid'::text, ...])`), given to the columns it names. */
function attachCheckLiterals(table: TableInfo, columns: readonly string[], definition: string | null): void {
  if (!definition) return;
  const literals = [...definition.matchAll(/'((?:[^']|'')*)'/g)]
    .map((m) => (m[1] ?? '').replaceAll("''", "'"))
    .filter((v) => v.trim() !== '');
  if (literals.length === 0) return;
  for (const name of columns) {
    const column = table.columns.find((c) => c.name === name);
    if (!column) continue;
    column.allowedValues = [...new Set([...(column.allowedValues ?? []), ...literals])].slice(0, MAX_ALLOWED_VALUES);
  }
}

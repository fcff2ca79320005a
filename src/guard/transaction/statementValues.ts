/**
 * The values of one recorded statement, as its approval binds them: the statement's text with each constant
 * replaced by `$n` (PostgreSQL's normalized text: what must be identical, byte for byte) and its constants in
 * the order of the text, each with where it stands. Bind values are constants here too: the guard records a
 * statement of the extended protocol with its values written in (boundSql.ts).
 *
 * Where a value stands decides whether it may ever vary on retry (varyingValues.ts): a value in a predicate
 * that chooses rows (WHERE, ON CONFLICT, USING, FROM and joins, HAVING, LIMIT…), anywhere in an INSERT with an
 * ON CONFLICT clause (its values choose the row it updates), or set on a column of an UPDATE … SET, records
 * that; DDL's values never vary.
 */
import { normalizeSql, parseSql } from '../../core/sql/parse';

export interface ValueSite {
  /** The constant as text ('6', 'abc', 't'); null for NULL. */
  value: string | null;
  /** In a part of the statement that chooses rows: it must be identical (or a value the server returned). */
  choosesRows: boolean;
  /** In the SET list of an UPDATE: the column set, and its table (a key column never varies). */
  setColumn?: { table: string; column: string };
  /** In a data change or query (never DDL): its values may vary at all. */
  dml: boolean;
}

export interface StatementValues {
  /** The text with its constants as `$n`: two statements of one normalized text differ in constants only. */
  normalized: string;
  sites: ValueSite[];
}

/** Parts of a statement whose constants choose rows. */
const CHOOSING = new Set([
  'whereClause',
  'onConflictClause',
  'usingClause',
  'fromClause',
  'quals',
  'havingClause',
  'joinCondition',
  'limitCount',
  'limitOffset',
  'sortClause',
  'groupClause',
  'distinctClause',
  'lockingClause',
  'windowClause',
]);
const DML = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'SelectStmt']);

/** The parser must be loaded (loadParser). Throws the parser's error for a text that does not parse. */
export function statementValues(sql: string): StatementValues {
  const parsed = parseSql(sql);
  const sites: ValueSite[] = [];
  for (const statement of parsed.statements) {
    const found: (ValueSite & { location: number })[] = [];
    walk(statement.tree, { choosesRows: false, dml: DML.has(statement.kind) }, found);
    // The text's order (the tree's order is the grammar's: an UPDATE's SET list before its WHERE, as written).
    found.sort((a, b) => a.location - b.location);
    sites.push(...found.map(({ location: _, ...site }) => site));
  }
  return { normalized: normalizeSql(sql), sites };
}

interface Context {
  choosesRows: boolean;
  dml: boolean;
  setColumn?: { table: string; column: string };
}

type Json = Record<string, unknown>;

function walk(node: unknown, context: Context, out: (ValueSite & { location: number })[]): void {
  // Iterative over arrays and objects: deep expressions must not overflow the stack.
  const stack: [unknown, Context][] = [[node, context]];
  while (stack.length > 0) {
    const [current, ctx] = stack.pop()!;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], ctx]);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    const object = current as Json;
    const constant = object.A_Const as Json | undefined;
    if (constant !== undefined) {
      out.push({
        value: constantText(constant),
        choosesRows: ctx.choosesRows,
        dml: ctx.dml,
        location: typeof constant.location === 'number' ? constant.location : 0,
        ...(ctx.setColumn ? { setColumn: ctx.setColumn } : {}),
      });
      continue;
    }
    const insert = object.InsertStmt as Json | undefined;
    const update = object.UpdateStmt as Json | undefined;
    for (const [key, child] of Object.entries(object)) {
      let next = ctx;
      if (CHOOSING.has(key)) next = { ...ctx, choosesRows: true, setColumn: undefined };
      if (insert !== undefined && insert.onConflictClause !== undefined) next = { ...next, choosesRows: true };
      if (update !== undefined && key === 'UpdateStmt') {
        stack.push(...updateParts(child as Json, next));
        continue;
      }
      stack.push([child, next]);
    }
  }
}

/** An UPDATE: each SET value knows its column and table; everything else walks as usual. */
function updateParts(update: Json, ctx: Context): [unknown, Context][] {
  const table = relationName(update.relation);
  const parts: [unknown, Context][] = [];
  for (const [key, child] of Object.entries(update)) {
    if (key !== 'targetList' || !Array.isArray(child)) {
      parts.push([child, CHOOSING.has(key) ? { ...ctx, choosesRows: true } : ctx]);
      continue;
    }
    for (const target of child) {
      const res = (target as Json).ResTarget as Json | undefined;
      const column = typeof res?.name === 'string' ? res.name : '';
      parts.push([target, { ...ctx, setColumn: { table, column } }]);
    }
  }
  return parts;
}

function relationName(relation: unknown): string {
  const r = (relation ?? {}) as Json;
  const name = typeof r.relname === 'string' ? r.relname : '';
  return typeof r.schemaname === 'string' ? `${r.schemaname}.${name}` : name;
}

/** A constant's text as PostgreSQL's grammar read it (protobuf leaves zero and false out). */
function constantText(constant: Json): string | null {
  if (constant.isnull === true) return null;
  const field = (key: string, fallback: string): string => {
    const inner = (constant[key] as Json | undefined)?.[key];
    return typeof inner === 'string' || typeof inner === 'number' ? String(inner) : fallback;
  };
  if ('ival' in constant) return field('ival', '0');
  if ('fval' in constant) return field('fval', '0');
  if ('boolval' in constant) return (constant.boolval as Json | undefined)?.boolval === true ? 't' : 'f';
  if ('sval' in constant) return field('sval', '');
  if ('bsval' in constant) return field('bsval', '');
  return null;
}

/**
 * A statement of the extended protocol with its bound parameters, as one SQL text a person reads and the
 * executor runs: each `$n` replaced by its value as a quoted literal (cast to the type the client declared
 * in Parse; without one, an untyped literal takes its type from the context, as the parameter would have).
 * The places of `$n` come from PostgreSQL's grammar (ParamRef locations), never from a text search.
 */
import type { Db } from '../../core/db/db';
import { AgentError } from '../../core/platform/errors';
import { loadParser } from '../../core/sql/parse';
import { parsedText } from './parsedText';
import { TextMemo } from './textMemo';

export interface BoundParameters {
  values: (Buffer | null)[];
  /** Bind's format codes: none (all text), one (for all) or one per parameter; 1 is binary. */
  formats: number[];
  /** Type names of Parse's declared types, per parameter; undefined where the client left the type open. */
  typeNames: (string | undefined)[];
}

/**
 * The statement with every `$n` as a NULL of its declared type: judged once at Parse, it says what the
 * statement is for any values (values cannot change what a statement does, only which rows it touches).
 */
export function nullBoundSql(sql: string, typeNames: readonly (string | undefined)[]): Promise<string> {
  return nullBound.get(nullBoundKey(sql, typeNames), () =>
    bindSql(sql, { values: [], formats: [], typeNames: [...typeNames] }, true),
  );
}

/**
 * What nullBoundSql answered before for `sql` with parameters of these declared type oids, without waiting
 * (built-in types named before, the text bound before); undefined: nullBoundSql (and typeNamesOf) must say.
 */
export function knownNullBoundSql(sql: string, oids: readonly number[]): string | undefined {
  if (!oids.every(known)) return undefined;
  return nullBound.known(nullBoundKey(sql, oids.map(typeNameOfKnown)));
}

// The type names are format_type() output or undefined: no NUL in them, so the key is unambiguous.
const nullBoundKey = (sql: string, typeNames: readonly (string | undefined)[]): string =>
  `${typeNames.map((t) => t ?? '').join('\0')}\0\0${sql}`;

const nullBound = new TextMemo<string>();

export async function bindSql(sql: string, bound: BoundParameters, allNull = false): Promise<string> {
  await loadParser();
  const parsed = parsedText(sql);
  const places: { start: number; end: number; number: number }[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (key === 'ParamRef' && value !== null && typeof value === 'object') {
        const ref = value as { number?: number; location?: number };
        if (typeof ref.number === 'number' && typeof ref.location === 'number') {
          const start = parsed.indexOfByte(ref.location);
          const digits = /^\$\d+/.exec(sql.slice(start))?.[0];
          if (digits) places.push({ start, end: start + digits.length, number: ref.number });
        }
      }
      walk(value);
    }
  };
  for (const statement of parsed.statements) walk(statement.tree);
  places.sort((a, b) => b.start - a.start);
  let text = sql;
  for (const place of places) {
    const value = allNull ? nullOf(bound.typeNames[place.number - 1]) : literal(place.number, bound);
    text = text.slice(0, place.start) + value + text.slice(place.end);
  }
  return text;
}

function literal(number: number, bound: BoundParameters): string {
  const index = number - 1;
  if (index < 0 || index >= bound.values.length) {
    throw new AgentError(
      'SQL_PLACEHOLDERS',
      `$${number} has no value: the client bound ${bound.values.length} parameter(s).`,
    );
  }
  const format = bound.formats.length === 1 ? bound.formats[0] : (bound.formats[index] ?? 0);
  if (format !== 0) {
    throw new AgentError(
      'BAD_INPUT',
      `Parameter $${number} is sent in binary: the guard shows a held statement's values as text and cannot read it.`,
      'Send parameters in text format (the default of psql, node-postgres, psycopg2).',
    );
  }
  const value = bound.values[index];
  const type = bound.typeNames[index];
  const body = value === null || value === undefined ? 'NULL' : `'${value.toString('utf8').replace(/'/g, "''")}'`;
  return type ? `${body}::${type}` : body;
}

function nullOf(type: string | undefined): string {
  return type ? `NULL::${type}` : 'NULL';
}

/** Objects created after initdb have oids from here on; a built-in type's name never changes. */
const FIRST_NORMAL_OID = 16384;
/** Names of built-in types asked before (a driver declares the same few on every Parse). */
const builtInNames = new Map<number, string | undefined>();
const known = (oid: number) => oid === 0 || builtInNames.has(oid);
const typeNameOfKnown = (oid: number) => (oid === 0 ? undefined : builtInNames.get(oid));

/**
 * Type names of Parse's declared parameter types (undefined where the client left a type open). Built-in types
 * are asked once per process; a type created in the database (which may be renamed) is asked each time.
 */
export async function typeNamesOf(db: Db, oids: readonly number[]): Promise<(string | undefined)[]> {
  if (oids.every(known)) return oids.map(typeNameOfKnown);
  const result = await db.query<{ name: string | null }>(
    'SELECT format_type(t, NULL) AS name FROM unnest($1::oid[]) WITH ORDINALITY AS u(t, n) ORDER BY n',
    [oids],
  );
  const names = result.rows.map((row, i) => (oids[i] === 0 || row.name === null ? undefined : row.name));
  oids.forEach((oid, i) => oid > 0 && oid < FIRST_NORMAL_OID && builtInNames.set(oid, names[i]));
  return names;
}

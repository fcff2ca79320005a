/**
 * Splits SQL into statements with PostgreSQL's own grammar (libpg-query, WASM): each statement's text,
 * offset and raw parse tree. Loading is async and done once (loadParser); parsing after that is sync.
 */
import type * as PgQuery from 'libpg-query';
import type { Node } from 'libpg-query';
import { AgentError } from '../platform/errors';
import type { SqlSyntaxProblem } from './classification';

export interface ParsedStatement {
  /** The statement's text, without the leading comments PostgreSQL skips and without surrounding blanks. */
  sql: string;
  /** 0-based offset of the statement in the input, in UTF-16 code units (a JS string index). */
  offset: number;
  /** Top-level node type: "SelectStmt", "DeleteStmt", … */
  kind: string;
  /** The statement's raw tree (RawStmt.stmt); locations inside it are UTF-8 byte offsets into the input. */
  tree: Node;
}

export interface ParsedInput {
  input: string;
  statements: ParsedStatement[];
  /** PostgreSQL version of the grammar (180004 = 18.4). */
  version: number;
  /** Converts a location of the tree (UTF-8 bytes into the input) to a JS string index into the input. */
  indexOfByte: (byteOffset: number) => number;
}

/** A syntax error as PostgreSQL reports it, with the 0-based position of the error in the input. */
export class SqlSyntaxError extends AgentError {
  readonly position: number;

  constructor(problem: SqlSyntaxProblem, input: string, options?: { cause?: unknown }) {
    const { line, column } = lineAndColumn(input, problem.position);
    super('SQL_SYNTAX', problem.message, `Check the SQL near line ${line}, column ${column}.`, options);
    this.position = problem.position;
  }

  get problem(): SqlSyntaxProblem {
    return { message: this.message, position: this.position };
  }
}

let pgQuery: typeof PgQuery | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the parser's WASM once; later calls return at once. Imported lazily so that commands which never
 * parse SQL do not pay for instantiating the WASM module (libpg-query starts that on import).
 */
export function loadParser(): Promise<void> {
  if (pgQuery) return Promise.resolve();
  loading ??= (async () => {
    try {
      const module = await import('libpg-query');
      await module.loadModule();
      pgQuery = module;
    } catch (error) {
      loading = undefined;
      const message = error instanceof Error ? error.message : String(error);
      throw new AgentError(
        'INTERNAL',
        `The SQL parser could not be loaded: ${message}`,
        'Reinstall Postgres Agent: libpg-query.wasm must sit next to the bundle.',
        { cause: error },
      );
    }
  })();
  return loading;
}

export function isParserLoaded(): boolean {
  return pgQuery !== undefined;
}

/**
 * Parses a whole `CREATE FUNCTION … LANGUAGE plpgsql` statement into PL/pgSQL's own tree (libpg-query's
 * plpgsql_funcs JSON), with the module loadParser() loaded. Throws the parser's error for a body that does
 * not parse (the reach engine turns that into unknown code).
 */
export function parsePlPgSqlFunction(createFunctionSql: string): unknown {
  const pg = pgQuery;
  if (!pg) throw new Error('The SQL parser is not loaded: await loadParser() before parsePlPgSqlFunction().');
  return pg.parsePlPgSQLSync(createFunctionSql);
}

/**
 * PostgreSQL's query fingerprint of `sql` (libpg-query): the same for texts that differ only in constants,
 * `$n` numbers, blanks and comments; what a statement "template" is when its values may change.
 */
export function fingerprintSql(sql: string): string {
  const pg = pgQuery;
  if (!pg) throw new Error('The SQL parser is not loaded: await loadParser() before fingerprintSql().');
  return pg.fingerprintSync(sql);
}

/**
 * PostgreSQL's normalized text of `sql` (libpg-query, as pg_stat_statements shows it): each constant replaced by
 * `$n`, everything else as written; two texts with one normalized text differ only in their constants.
 */
export function normalizeSql(sql: string): string {
  const pg = pgQuery;
  if (!pg) throw new Error('The SQL parser is not loaded: await loadParser() before normalizeSql().');
  return pg.normalizeSync(sql);
}

/** The string constants of `sql` as PostgreSQL's scanner sees them: UTF-8 byte ranges into the input. */
export function stringConstantsOf(sql: string): { start: number; end: number }[] {
  const pg = pgQuery;
  if (!pg) throw new Error('The SQL parser is not loaded: await loadParser() before stringConstantsOf().');
  return pg
    .scanSync(sql)
    .tokens.filter((t) => t.tokenName === 'SCONST' || t.tokenName === 'USCONST')
    .map((t) => ({ start: t.start, end: t.end }));
}

let parses = 0;

/** How many times parseSql ran in this process (a statement should be parsed once on its way: tests count). */
export function parseCount(): number {
  return parses;
}

const PG_BLANK = /^[ \t\n\r\f\v]*/;
const PG_BLANK_END = /[ \t\n\r\f\v]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Parses the input into statements. Throws AgentError BAD_INPUT (NUL, broken Unicode, too deeply nested),
 * SQL_EMPTY (nothing but blanks, comments or semicolons) or SqlSyntaxError (SQL_SYNTAX).
 */
export function parseSql(input: string): ParsedInput {
  parses++;
  checkInput(input);
  const pg = pgQuery;
  if (!pg) throw new Error('The SQL parser is not loaded: await loadParser() before parseSql() or classifySql().');
  let result: PgQuery.ParseResult;
  try {
    result = pg.parseSync(input);
  } catch (error) {
    throw parseFailure(pg, error, input);
  }
  const raws = result.stmts ?? [];
  if (raws.length === 0) throw emptyError();
  const indexOfByte = byteToIndexMapper(input);
  const statements = raws.map((raw): ParsedStatement => {
    const tree = raw.stmt;
    if (!tree) throw new Error('libpg-query returned a statement without a tree.');
    const startByte = raw.stmt_location ?? 0;
    const lengthBytes = raw.stmt_len ?? 0;
    const start = indexOfByte(startByte);
    const end = lengthBytes > 0 ? indexOfByte(startByte + lengthBytes) : input.length;
    const text = input.slice(start, end);
    const lead = PG_BLANK.exec(text)?.[0].length ?? 0;
    const sql = text.slice(lead).replace(PG_BLANK_END, '');
    return { sql, offset: start + lead, kind: Object.keys(tree)[0] ?? 'unknown', tree };
  });
  return { input, statements, version: result.version ?? 0, indexOfByte };
}

function checkInput(input: string): void {
  if (typeof input !== 'string') throw new AgentError('BAD_INPUT', 'The SQL must be text.');
  const nul = input.indexOf('\0');
  if (nul >= 0) {
    // The parser would stop at the NUL and never see what follows it; the server must not get it either.
    throw new AgentError(
      'BAD_INPUT',
      `The SQL contains a NUL character at position ${nul}.`,
      'Remove it: PostgreSQL does not accept NUL characters in SQL text.',
    );
  }
  const lone = LONE_SURROGATE.exec(input);
  if (lone) {
    // libpg-query's string marshalling miscounts lone surrogates and then silently truncates the input,
    // so the parser would see less SQL than the server receives.
    throw new AgentError(
      'BAD_INPUT',
      `The SQL is not valid Unicode: a lone surrogate character at position ${lone.index}.`,
      'Remove the broken character (often the result of cutting an emoji in half).',
    );
  }
  if (input.replace(PG_BLANK, '') === '') throw emptyError();
}

function emptyError(): AgentError {
  return new AgentError(
    'SQL_EMPTY',
    'There is no SQL statement to run: the input holds only blanks, comments or semicolons.',
    'Write a statement.',
  );
}

function parseFailure(pg: typeof PgQuery, error: unknown, input: string): AgentError | Error {
  if (pg.hasSqlDetails(error) && error.sqlDetails) {
    // libpg-query already turns PostgreSQL's 1-based cursorpos into a 0-based count of code points.
    const position = codePointToIndex(input, Math.max(0, error.sqlDetails.cursorPosition));
    return new SqlSyntaxError({ message: error.sqlDetails.message, position }, input, { cause: error });
  }
  if (error instanceof RangeError) {
    return new AgentError(
      'BAD_INPUT',
      'The SQL is nested too deeply for the parser.',
      'Split it into simpler statements.',
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new AgentError('INTERNAL', `The SQL parser failed: ${message}`, undefined, { cause: error });
}

/** Maps UTF-8 byte offsets (the tree's locations) to JS string indexes; identity for ASCII input. */
function byteToIndexMapper(input: string): (byteOffset: number) => number {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(input)) return (byteOffset) => clamp(byteOffset, input.length);
  const map: number[] = [];
  for (let index = 0; index < input.length;) {
    const codePoint = input.codePointAt(index) ?? 0;
    const bytes = codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
    for (let b = 0; b < bytes; b++) map.push(index);
    index += codePoint >= 0x10000 ? 2 : 1;
  }
  map.push(input.length);
  return (byteOffset) => map[clamp(byteOffset, map.length - 1)] ?? input.length;
}

function codePointToIndex(input: string, codePoints: number): number {
  let index = 0;
  for (let n = 0; n < codePoints && index < input.length; n++) {
    index += (input.codePointAt(index) ?? 0) >= 0x10000 ? 2 : 1;
  }
  return index;
}

function clamp(value: number, max: number): number {
  return value < 0 ? 0 : value > max ? max : value;
}

function lineAndColumn(input: string, position: number): { line: number; column: number } {
  const before = input.slice(0, position);
  const lastBreak = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: position - lastBreak };
}

/**
 * The guard's memory of statements it let pass (SPEC §7: a read through the guard must cost little more
 * than direct), so that `SELECT … WHERE aid = 4242` and then `… aid = 4243` are not parsed and walked again.
 *
 * Keys. A text made only of ASCII letters, digits, blanks and `( ) , . ; = < > * + - : [ ]` (no quote, no
 * `$`, no comment, no backslash: nothing whose reading depends on the lexer's finer rules) has each plain
 * number replaced by its class: `I` for an integer that is int4 with either sign (≤ 2147483647), `L` for one
 * that is int8 with either sign (2147483649 … 9223372036854775807), `N` for one with a fraction or exponent
 * (numeric). The class is the type PostgreSQL gives the constant, so `f(1)` and `f(3000000000)` (f(int4) and
 * f(int8) may be different functions), `x = 1` and `x = 1.5` (different operators) never share a key;
 * 2147483648 and larger integers, whose type depends on a minus sign, stay as they are. Every other text is
 * its own key. String literals are never abstracted: a literal can name a relation or a function
 * ('f'::regproc), carry SQL (query_to_xml('DELETE …')) or pick an overload by its unknown type.
 *
 * What may be kept. Only 'pass', and only when each abstracted number is a constant of an expression
 * (an A_Const at the number's place in PostgreSQL's own tree): a number that is an option's value
 * (EXPLAIN (ANALYZE 0)) or anything else is never abstracted, since the judgement reads those. The
 * judgement of a read never depends on a numeric constant's value.
 *
 * How long. One cache per reach engine, i.e. per code version of the database (core/sql/reach/reachOf.ts:
 * a changed function, operator, cast… is a new engine): an entry is trusted exactly as long as the
 * version it was judged on, checked as every judgement checks it (judge.ts VERSION_MAX_AGE_MS), and forgotten
 * at once when this process announces a schema change (core/db/schemaChanges.ts). At most
 * MAX_ENTRIES keys, the least recently used forgotten first.
 */
import { schemaChanges } from '../../core/db/schemaChanges';
import type { ParsedInput } from '../../core/sql/parse';
import type { SessionTouch } from './sessionTouch';
import { UNTOUCHED } from './sessionTouch';

export const MAX_ENTRIES = 2000;
/** Longer texts are judged every time (and not kept): a key the size of a script is no saving. */
const MAX_KEY_LENGTH = 4000;

export interface StatementKey {
  key: string;
  /** Offsets of the numbers the key abstracts (each must be an expression constant for the key to be kept). */
  numbers: number[];
}

// Anything else (quotes, $, /, \, non-ASCII, control characters…) leaves the text as its own key.
const PLAIN = /^[A-Za-z0-9_ \t\n\r(),.;=<>*+\-:[\]]*$/;
const INT4_MAX = '2147483647';
const INT8_MAX = '9223372036854775807';

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isWordStart = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
const isWord = (c: number): boolean => isWordStart(c) || isDigit(c);
const E = 0x65;
const UPPER_E = 0x45;
const DOT = 0x2e;
const PLUS = 0x2b;
const MINUS = 0x2d;

/** The cache key of `sql` (see the header): `#` and the text, each abstracted number replaced by NUL and its class. */
export function statementKey(sql: string): StatementKey | undefined {
  if (sql.length > MAX_KEY_LENGTH) return undefined;
  if (!PLAIN.test(sql) || sql.includes('--')) return { key: `=${sql}`, numbers: [] };
  let key = '#';
  /** Where the text not yet copied into the key begins. */
  let copied = 0;
  const numbers: number[] = [];
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (isWordStart(c)) {
      while (i < n && isWord(sql.charCodeAt(i))) i++;
    } else if (isDigit(c)) {
      const start = i;
      while (i < n && isDigit(sql.charCodeAt(i))) i++;
      let numeric = false;
      if (sql.charCodeAt(i) === DOT) {
        numeric = true;
        i++;
        while (i < n && isDigit(sql.charCodeAt(i))) i++;
      }
      const e = sql.charCodeAt(i);
      const sign = sql.charCodeAt(i + 1);
      if (
        (e === E || e === UPPER_E) &&
        (isDigit(sign) || ((sign === PLUS || sign === MINUS) && isDigit(sql.charCodeAt(i + 2))))
      ) {
        numeric = true;
        i += 2;
        while (i < n && isDigit(sql.charCodeAt(i))) i++;
      }
      // 12abc, 0x1F, 1_000, 1.2.3, 1..2: read differently by PostgreSQL versions, or not a number: the text is its own key.
      if (i < n && (isWord(sql.charCodeAt(i)) || sql.charCodeAt(i) === DOT)) return { key: `=${sql}`, numbers: [] };
      const kind = numeric ? 'N' : integerClass(sql.slice(start, i));
      if (kind !== undefined) {
        key += `${sql.slice(copied, start)}\0${kind}`;
        copied = i;
        numbers.push(start);
      }
    } else if (c === DOT && isDigit(sql.charCodeAt(i + 1))) {
      // .5 is a number too; rare enough to leave the text as its own key.
      return { key: `=${sql}`, numbers: [] };
    } else {
      i++;
    }
  }
  return { key: key + sql.slice(copied), numbers };
}

function integerClass(digits: string): 'I' | 'L' | undefined {
  const value = digits.charCodeAt(0) === 0x30 ? digits.replace(/^0+(?=\d)/, '') : digits;
  if (fitsUnder(value, INT4_MAX)) return 'I';
  // 2147483648 is int8, but int4 after a minus sign: its type is not the class of its digits.
  if (value === '2147483648') return undefined;
  if (fitsUnder(value, INT8_MAX)) return 'L';
  return undefined;
}

function fitsUnder(value: string, max: string): boolean {
  return value.length < max.length || (value.length === max.length && value <= max);
}

/** True when every number the key abstracts is an A_Const of `parsed` (at its place, or at its minus sign). */
export function numbersAreConstants(parsed: ParsedInput, numbers: readonly number[]): boolean {
  if (numbers.length === 0) return true;
  const constants = new Set<number>();
  const stack: unknown[] = parsed.statements.map((s) => s.tree);
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const record = node as Record<string, unknown>;
    const constant = record.A_Const as { ival?: unknown; fval?: unknown; location?: number } | undefined;
    if (
      constant &&
      typeof constant === 'object' &&
      (constant.ival !== undefined || constant.fval !== undefined) &&
      typeof constant.location === 'number'
    ) {
      constants.add(constant.location);
    }
    for (const value of Object.values(record)) if (value !== null && typeof value === 'object') stack.push(value);
  }
  // ASCII only (PLAIN), so the tree's byte offsets are string offsets.
  return numbers.every((at) => constants.has(at) || (parsed.input[at - 1] === '-' && constants.has(at - 1)));
}

/**
 * Keys of texts judged 'pass', least recently used first, each with what it does to its session (sessionTouch.ts,
 * which no numeric constant changes); one per code version (see the header).
 */
export class PassCache {
  private readonly keys = new Map<string, SessionTouch>();

  /** The session touch of a key judged 'pass', or undefined. */
  get(key: string): SessionTouch | undefined {
    const touch = this.keys.get(key);
    if (touch === undefined) return undefined;
    // Most recently used last.
    this.keys.delete(key);
    this.keys.set(key, touch);
    return touch;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  add(key: string, touch: SessionTouch = UNTOUCHED): void {
    this.keys.delete(key);
    this.keys.set(key, touch);
    if (this.keys.size > MAX_ENTRIES) this.keys.delete(this.keys.keys().next().value!);
  }

  get size(): number {
    return this.keys.size;
  }
}

let caches = new WeakMap<object, PassCache>();
// A schema change committed through this process (approved DDL, a person's Refresh) forgets every kept 'pass' at
// once, before the next version check would notice it.
schemaChanges.subscribe(() => {
  caches = new WeakMap();
  return Promise.resolve();
});

/** The pass cache of one code version (its reach engine). */
export function passCacheOf(version: object): PassCache {
  let cache = caches.get(version);
  if (!cache) {
    cache = new PassCache();
    caches.set(version, cache);
  }
  return cache;
}

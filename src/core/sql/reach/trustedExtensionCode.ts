/**
 * Contrib extensions whose C functions only compute (SPEC §5 1a allows a short, named allow-list): a function
 * that belongs to one of them (pg_depend 'e') is judged safe instead of unknown code. Side-effect list entries
 * (sideEffectFunctions.ts: crosstab, connectby, dblink, lo_*, pg_prewarm, …) are checked first and always win.
 * Only these exact extension names: an attacker can name a schema anything, but not an extension's membership.
 */

/** Extension → why its C code is safe to run in a read or a preview ('*' = every function). */
const TRUSTED: ReadonlyMap<string, { why: string; only?: readonly string[] }> = new Map([
  // Sets a timestamp column of NEW in a BEFORE UPDATE trigger; no I/O, no SQL.
  ['moddatetime', { why: 'sets a timestamp in the row being written' }],
  // Hashing, encryption and random bytes over its arguments; no files, no SQL, no other sessions.
  ['pgcrypto', { why: 'computes hashes and ciphers of its arguments' }],
  // Trigram similarity and its index support; pure functions of text.
  ['pg_trgm', { why: 'computes trigram similarity of text' }],
  // A case-insensitive text type: I/O, comparison and casts.
  ['citext', { why: 'compares text case-insensitively' }],
  // A key/value type: I/O, operators and index support.
  ['hstore', { why: 'reads and builds key/value values' }],
  // UUID generators (random or from the clock/MAC); nothing else.
  ['uuid-ossp', { why: 'generates UUIDs' }],
  // Soundex, Levenshtein, metaphone: string distances.
  ['fuzzystrmatch', { why: 'computes string distances' }],
  // Removes accents through a dictionary loaded from the server's tsearch files at first use (read only).
  ['unaccent', { why: 'removes accents from text' }],
  // Label-tree type: I/O, operators, index support.
  ['ltree', { why: 'reads and compares label paths' }],
  // N-dimensional cube type and its operators.
  ['cube', { why: 'computes with cubes' }],
  // Great-circle distances (SQL and cube functions).
  ['earthdistance', { why: 'computes distances on the earth' }],
  // Integer-array operators and index support.
  ['intarray', { why: 'computes with integer arrays' }],
  // GIN/GiST operator classes for ordinary types: index support functions only.
  ['btree_gin', { why: 'supports GIN indexes on ordinary types' }],
  ['btree_gist', { why: 'supports GiST indexes on ordinary types' }],
  // ISBN/ISSN/EAN types: I/O and checks of product numbers.
  ['isn', { why: 'reads and checks product numbers' }],
  // Line-segment type with its operators.
  ['seg', { why: 'computes with line segments' }],
  // Reads the statement statistics in shared memory (its view is read on most servers); the reset functions
  // are on the side-effect list and win.
  ['pg_stat_statements', { why: 'reads statement statistics' }],
  // Reads the shared buffer headers (what is cached); changes nothing.
  ['pg_buffercache', { why: 'reads what the buffer cache holds' }],
  // Only normal_rand (random numbers); crosstab and connectby run SQL text and are on the side-effect list.
  ['tablefunc', { why: 'generates normally distributed random numbers', only: ['normal_rand'] }],
]);

/** Why the extension's function is safe, or undefined when it is not on the allow-list. */
export function trustedExtensionCode(extension: string | null, functionName: string): string | undefined {
  if (extension === null) return undefined;
  const entry = TRUSTED.get(extension);
  if (!entry) return undefined;
  if (entry.only && !entry.only.includes(functionName.toLowerCase())) return undefined;
  return entry.why;
}

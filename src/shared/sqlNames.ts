/** SQL names as a person would write them: quoted only when they must be. Plain functions, no imports. */

/**
 * Words PostgreSQL reserves as names of tables and columns (a name spelled like one must be quoted): its reserved
 * keywords, and those it allows only as a type or function name (`left`, `join`, …: `SET left = 1` fails bare).
 */
const RESERVED = new Set(
  'authorization binary collation concurrently cross current_schema freeze full ilike inner is isnull join left like natural notnull outer overlaps right similar tablesample verbose all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create current_catalog current_date current_role current_time current_timestamp current_user default deferrable desc distinct do else end except false fetch for foreign from grant group having in initially intersect into lateral leading limit localtime localtimestamp not null offset on only or order placing primary references returning select session_user some symmetric system_user table then to trailing true union unique user using variadic when where window with'.split(
    ' ',
  ),
);

/** `orders`, `"Order Items"`, `"user"`: quoted when not lower-case letters, digits and _ (or a reserved word). */
export function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) && !RESERVED.has(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** `public.orders` → `orders` is not assumed: the schema is always given, each part quoted only if needed. */
export function qualifiedName(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}

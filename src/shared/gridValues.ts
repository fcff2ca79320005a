/**
 * A grid value (SPEC §6's JSON form: numbers, booleans, JSON for json/jsonb, arrays, PostgreSQL's text for the
 * rest) back to PostgreSQL's input text: what an edited cell starts from, and what a row's read values are
 * compared with when it is written. No imports: the results page uses it too.
 */

/** null for SQL NULL. */
export function inputText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return arrayText(value);
  return JSON.stringify(value);
}

/** `{1,"a b",NULL,"NULL"}`: every non-NULL element quoted, `"` and `\` escaped (array_in's rules). */
function arrayText(items: unknown[]): string {
  return `{${items
    .map((item) => {
      if (item === null || item === undefined) return 'NULL';
      if (Array.isArray(item)) return arrayText(item);
      const text = inputText(item) ?? '';
      return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
    })
    .join(',')}}`;
}

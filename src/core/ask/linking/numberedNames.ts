/**
 * Names with numbers, as people say them: "tenant 7" is tenant_7, "table t_12" or "t12" is t_12, "module 17"
 * is module_17_…. A name's keys are its adjacent word–number pairs ("tenant 7", "t 12", "module 17"); a
 * question's keys are the same pairs of its words, so a numbered schema or table the question names is found
 * by one lookup per pair, whatever the schema's size.
 */

/** Lower-case runs of letters and runs of digits, in order: "tenant_7" → tenant, 7; "t12" → t, 12. */
export function wordsAndNumbers(text: string): string[] {
  return text.toLowerCase().match(/[a-z]+|\d+/g) ?? [];
}

/** "word number" for each word directly followed by a number (leading zeros dropped: t_012 is t 12). */
export function numberedKeys(text: string): string[] {
  const parts = wordsAndNumbers(text);
  const keys: string[] = [];
  for (let i = 0; i + 1 < parts.length; i++) {
    const word = parts[i] ?? '';
    const next = parts[i + 1] ?? '';
    if (/^[a-z]/.test(word) && /^\d/.test(next)) keys.push(`${singular(word)} ${String(Number(next))}`);
  }
  return keys;
}

/** "tenants 7" and "tenant 7" meet: a plain trailing s is dropped. */
function singular(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** The closest of a few known words to what was typed ("did you mean --db?"), or undefined when none is close. */
export function closest(typed: string, known: readonly string[]): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const word of known) {
    const distance = editDistance(typed.toLowerCase(), word.toLowerCase());
    if (!best || distance < best.distance) best = { word, distance };
  }
  if (!best) return undefined;
  // Close means: a typo or two, or what was typed is the start of the word (--conn for --connection).
  const limit = Math.max(1, Math.floor(Math.max(typed.length, best.word.length) / 3));
  if (best.distance <= limit) return best.word;
  const prefix = known.filter((word) => typed.length >= 2 && word.startsWith(typed));
  return prefix.length === 1 ? prefix[0] : undefined;
}

/** " (did you mean X?)" or nothing. */
export function suggestion(typed: string, known: readonly string[]): string {
  const word = closest(typed, known);
  return word === undefined ? '' : ` (did you mean ${word}?)`;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  }
  return d[a.length]![b.length]!;
}

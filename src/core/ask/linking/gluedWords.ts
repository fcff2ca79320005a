/**
 * Identifiers glued without a separator ("securitygroupportbindings", "portdnses", "standardattributes") cut
 * into the words the same schema spells apart elsewhere (security_group_id, port_id, ml2_port_bindings): the
 * schema is its own dictionary, so no word list is guessed. A piece is a word of at least three letters seen as
 * a part of a multi-part identifier, or a known abbreviation (identifierWords.ts: "networkrbacs" → network,
 * rbac); a plural ending (s, es) may follow the last piece; fewest pieces win. A
 * word whose stem is itself such a part ("subnets", "rankings") is a word, not a glue.
 */
import { stem } from '../tokens';

const MIN_GLUED = 6;
export const MIN_PIECE = 3;
const MAX_GLUED = 40;

export type GluedSplitter = (word: string) => string[] | undefined;

/** `vocabulary`: the parts (three letters or more) of the schema's multi-part identifiers, lower-case. */
export function gluedSplitter(vocabulary: ReadonlySet<string>): GluedSplitter {
  const memo = new Map<string, string[] | undefined>();
  const stems = new Set([...vocabulary].map(stem));
  return (word) => {
    if (word.length < MIN_GLUED || word.length > MAX_GLUED || vocabulary.has(word) || stems.has(stem(word)))
      return undefined;
    if (memo.has(word)) return memo.get(word);
    const split = segment(word, vocabulary);
    memo.set(word, split);
    return split;
  };
}

/** Fewest-pieces segmentation (dynamic programming over end positions); undefined unless two or more pieces. */
function segment(word: string, vocabulary: ReadonlySet<string>): string[] | undefined {
  const n = word.length;
  const best: (string[] | undefined)[] = Array.from({ length: n + 1 }, () => undefined);
  best[0] = [];
  for (let end = MIN_PIECE; end <= n; end++) {
    for (let start = Math.max(0, end - 24); start <= end - MIN_PIECE; start++) {
      const before = best[start];
      if (!before) continue;
      const piece = word.slice(start, end);
      if (!vocabulary.has(piece)) continue;
      const current = best[end];
      if (!current || before.length + 1 < current.length) best[end] = [...before, piece];
    }
  }
  for (const ending of ['', 's', 'es']) {
    const found = best[n - ending.length];
    if (found && found.length >= 2 && (ending === '' || found[found.length - 1] !== undefined)) return found;
  }
  return undefined;
}

/** The lower-case letter runs of an identifier split at underscores, digits and case changes. */
export function identifierParts(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w !== '');
}

/**
 * Words and token costs for the schema context: how identifiers and questions are cut into comparable
 * terms, and how many model tokens a piece of text is assumed to cost.
 */
import { stemmer } from 'stemmer';
import { ABBREVIATIONS } from './identifierWords';

/**
 * Token estimate: ceil(characters / 4), the usual rule of thumb for English and SQL identifiers with
 * GPT/Gemini-style tokenizers. It is deliberately provider-independent and cheap; every count in the
 * schema context (each table block, the context, the whole schema) uses this one rule, so budgets and
 * comparisons are consistent even where the real tokenizer differs by a few percent.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Words that carry no meaning for finding tables, in questions and in identifiers alike. */
const STOP_WORDS = new Set(
  `a an the of for in on at to by with from into over under about as and or not no nor but if so than then
  is are was were be been being do does did done has have had can could would should will shall may might must
  how what which who whom whose where when why much many each every all any some both either neither
  me my mine i we our ours us you your yours he she it its they them their theirs this that these those there here
  show list give get find tell display return fetch select provide let please just only also per out up down
  most more less least top bottom last first next previous recent`
    .split(/\s+/)
    .filter((w) => w !== ''),
);

/** A tiny thesaurus of database words; each group is folded onto its first word (after stemming). */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['customer', 'client', 'buyer', 'shopper', 'purchaser', 'consumer'],
  ['order', 'purchase'],
  ['product', 'item', 'sku', 'article', 'merchandise'],
  ['price', 'cost', 'amount', 'total', 'spend', 'spent', 'paid', 'revenue'],
  ['date', 'time', 'at', 'day', 'month', 'year', 'week', 'timestamp', 'datetime', 'period'],
  ['stock', 'inventory', 'available', 'availability'],
  ['employee', 'staff', 'worker', 'personnel', 'employ'],
  ['department', 'dept', 'division'],
  ['salary', 'wage', 'compensation', 'payroll', 'earning'],
  ['address', 'location'],
  ['supplier', 'vendor', 'provider'],
  ['invoice', 'bill'],
  ['shipment', 'shipping', 'delivery', 'ship', 'deliver'],
  ['person', 'people', 'persons'],
  ['country', 'nation', 'nationality'],
  ['store', 'shop', 'outlet'],
  ['film', 'movie'],
  ['city', 'town'],
];

/** Irregular forms a stemmer cannot reach (general English, not words of one schema). */
const IRREGULAR = new Map(
  Object.entries({
    won: 'win',
    sold: 'sell',
    bought: 'buy',
    paid: 'pay',
    taught: 'teach',
    spoke: 'speak',
    spoken: 'speak',
    wrote: 'write',
    written: 'write',
    made: 'make',
    built: 'build',
    held: 'hold',
    led: 'lead',
    ran: 'run',
    gave: 'give',
    given: 'give',
    took: 'take',
    taken: 'take',
    flew: 'fly',
    flown: 'fly',
    drove: 'drive',
    driven: 'drive',
    sang: 'sing',
    sung: 'sing',
    born: 'birth',
    children: 'child',
    men: 'man',
    women: 'woman',
  }),
);

/**
 * Stemming, the same on both sides: irregular forms first, then Porter's algorithm (the maintained `stemmer`
 * package: plain JavaScript, no native code), so "migrations"/"migrate", "pricing"/"price" meet.
 */
export function stem(word: string): string {
  return stemmer(IRREGULAR.get(word) ?? word);
}

const SYNONYMS = new Map<string, string>();
for (const group of SYNONYM_GROUPS) {
  const canonical = stem(group[0] ?? '');
  for (const word of group) SYNONYMS.set(stem(word), canonical);
}

/** In identifiers these suffixes mean a point in time ("created_at", "shipped_on"); in sentences they are stop words. */
const IDENTIFIER_DATE_WORDS = new Set(['at', 'on']);
const DATE = stem('date');

/**
 * The terms of an identifier or a sentence: split on case changes ("orderItems", "HTTPServer"),
 * underscores, digits and punctuation; lower-cased; stop words, numbers and single letters dropped;
 * stemmed and folded onto synonyms. Duplicates are kept in order; callers make sets when they need them.
 * ASCII text (nearly every identifier) takes a hand-written scanner: this runs for every column of a
 * 40,000-column schema when its index is built.
 */
export function termsOf(text: string, kind: 'identifier' | 'text' = 'text'): string[] {
  const terms: string[] = [];
  // eslint-disable-next-line no-control-regex
  if (!/^[\x00-\x7f]*$/.test(text)) {
    const spaced = text.replace(/([\p{Ll}\d])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2');
    for (const raw of spaced.split(/[^\p{L}]+/u)) addTerm(terms, raw, kind);
    return terms;
  }
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    const upper = c >= 65 && c <= 90;
    if (!upper && !(c >= 97 && c <= 122)) {
      if (start >= 0) addTerm(terms, text.slice(start, i), kind);
      start = -1;
    } else if (start < 0) {
      start = i;
    } else if (upper) {
      const prev = text.charCodeAt(i - 1);
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      const prevLower = prev >= 97 && prev <= 122;
      const acronymEnd = prev >= 65 && prev <= 90 && next >= 97 && next <= 122; // the S of "HTTPServer"
      if (prevLower || acronymEnd) {
        addTerm(terms, text.slice(start, i), kind);
        start = i;
      }
    }
  }
  return terms;
}

/** Lower-cased word → its term, or null when it is dropped; the vocabulary of a schema is small. */
const termCache = new Map<string, string | null>();
const TERM_CACHE_LIMIT = 100_000;

function addTerm(terms: string[], raw: string, kind: 'identifier' | 'text'): void {
  if (raw.length < 2) return;
  const word = raw.toLowerCase();
  if (kind === 'identifier' && IDENTIFIER_DATE_WORDS.has(word)) {
    terms.push(DATE);
    return;
  }
  // Abbreviations are read in identifiers only: in a question "cat" is a cat, in a column name often a category.
  const spelled = kind === 'identifier' ? ABBREVIATIONS.get(word) : undefined;
  if (spelled === undefined) terms.push(...(termOf(word) ?? []));
  else for (const w of spelled.split(' ')) terms.push(...(termOf(w) ?? []));
}

/** The term of one lower-case word (stop word → none), memoized. */
export function termOf(word: string): [string] | null {
  let term = termCache.get(word);
  if (term === undefined) {
    term = STOP_WORDS.has(word) ? null : (SYNONYMS.get(stem(word)) ?? stem(word));
    if (termCache.size >= TERM_CACHE_LIMIT) termCache.clear();
    termCache.set(word, term);
  }
  return term === null ? null : [term];
}

/**
 * What a person is shown is what runs (SPEC §5 3a): SQL turned into text that displays every character it
 * holds. Control characters (a terminal obeys ESC[2K, CR, BS…), bidi controls (they reorder what is drawn)
 * and invisible characters (zero-width, odd spaces, tags) are replaced by a visible stand-in, and each is
 * reported so every surface where a person decides can also flag the statement. The one function for the
 * CLI, the VS Code host, the MCP server and the webviews: pure, no imports.
 *
 * Decisions: `\n` and `\t` are shown as they are; `\r\n` is a line end (a CR just before LF cannot hide
 * anything: nothing is drawn between them), kept as it is and not flagged; a lone CR is flagged. Emoji
 * stay as they are, with the zero-width joiner and presentation selector they are built from; the same
 * characters outside an emoji are flagged. No exemption for comments or string literals: a hidden
 * character there changes what a person reads (a comment) or what is stored (a literal) just the same.
 */

export interface HiddenCharacter {
  /** The Unicode code point (a lone surrogate is reported as its own code unit). */
  codePoint: number;
  /** A short name a person can look up: `ESC`, `CR`, `U+202E RIGHT-TO-LEFT OVERRIDE`. */
  name: string;
  /** What stands in its place in `text`: `␛`, `⟨U+202E⟩`. */
  shownAs: string;
  /** 1-based line (lines end at `\n`) and column (in code points) in the original SQL. */
  line: number;
  column: number;
  /** UTF-16 offset and length in the original SQL (an editor's range). */
  offset: number;
  length: number;
}

export interface VisibleSql {
  /** The SQL with every hidden character replaced by its stand-in; equal to the input when none. */
  text: string;
  /** Every replaced character, in order; empty means nothing was hidden (the statement is not flagged). */
  hidden: HiddenCharacter[];
}

/**
 * Candidates: controls but TAB and LF, format characters (bidi, zero-width, tags, BOM), line/paragraph
 * separators, every space but U+0020 (the Zs set), lone surrogates, and the invisible letters and marks that
 * render as nothing (combining grapheme joiner, Hangul fillers, Khmer inherent vowels, the blank Braille
 * pattern, Mongolian and other variation selectors).
 * Spelled out rather than \p{Cc}/\p{Zs}, so plain text (spaces, newlines) never reaches the callback.
 */
const CANDIDATE =
  // eslint-disable-next-line no-control-regex, no-misleading-character-class -- control characters are what this finds; each invisible mark is listed alone, on purpose
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\p{Cs}\u034F\u115F\u1160\u17B4\u17B5\u2800\u3164\uFFA0\u180B-\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;

// prettier-ignore
const C0_NAMES = [
  'NUL', 'SOH', 'STX', 'ETX', 'EOT', 'ENQ', 'ACK', 'BEL', 'BS', 'TAB', 'LF', 'VT', 'FF', 'CR', 'SO', 'SI',
  'DLE', 'DC1', 'DC2', 'DC3', 'DC4', 'NAK', 'SYN', 'ETB', 'CAN', 'EM', 'SUB', 'ESC', 'FS', 'GS', 'RS', 'US',
];

const NAMES: Record<number, string> = {
  0x7f: 'DEL',
  0x85: 'NEL',
  0x9b: 'CSI',
  0xa0: 'NO-BREAK SPACE',
  0xad: 'SOFT HYPHEN',
  0x61c: 'ARABIC LETTER MARK',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
};

const PICTOGRAPH = /[\p{Extended_Pictographic}\p{Emoji_Modifier}]/u;
const EMOJI = /\p{Emoji}/u;
const KEYCAP_BASE = /[0-9#*]/;
const COMBINING_KEYCAP = 0x20e3;
const ZWJ = 0x200d;
const TEXT_PRESENTATION = 0xfe0e;
const EMOJI_PRESENTATION = 0xfe0f;

export function visibleSql(sql: string): VisibleSql {
  const hidden: HiddenCharacter[] = [];
  // Line starts are found lazily: most statements hold nothing to replace.
  let lineStarts: number[] | undefined;
  const text = sql.replace(CANDIDATE, (char: string, offset: number) => {
    const codePoint = char.codePointAt(0) ?? 0;
    if (isShownAsIs(sql, codePoint, offset, char.length)) return char;
    const shownAs = standIn(codePoint);
    lineStarts ??= startsOfLines(sql);
    const line = lineOf(lineStarts, offset);
    const lineStart = lineStarts[line - 1] ?? 0;
    hidden.push({
      codePoint,
      name: nameOf(codePoint),
      shownAs,
      line,
      column: [...sql.slice(lineStart, offset)].length + 1,
      offset,
      length: char.length,
    });
    return shownAs;
  });
  return { text, hidden };
}

/**
 * One sentence for a flagged statement, empty when nothing was hidden: "contains 2 hidden characters:
 * ESC at line 1, U+202E RIGHT-TO-LEFT OVERRIDE at line 3 — shown as ␛ and ⟨U+202E⟩". Lists the first few.
 */
export function hiddenWarning(hidden: readonly HiddenCharacter[], listed = 4): string {
  if (hidden.length === 0) return '';
  const where = hidden.slice(0, listed).map((h) => `${h.name} at line ${h.line}`);
  if (hidden.length > listed) where.push(`${hidden.length - listed} more`);
  const shown = [...new Set(hidden.map((h) => h.shownAs))];
  const shownList = shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
  return `contains ${hidden.length} hidden character${hidden.length === 1 ? '' : 's'}: ${where.join(', ')} — shown as ${shownList}`;
}

/**
 * A statement as a card draws it (the side panel, the job cockpit): its visible text and, when it holds
 * hidden characters, a short badge and the sentence that says which.
 */
export function statementView(sql: string): { text: string; flag: { badge: string; sentence: string } | null } {
  const { text, hidden } = visibleSql(sql);
  if (hidden.length === 0) return { text, flag: null };
  return {
    text,
    flag: {
      badge: `⚠ ${hidden.length} hidden character${hidden.length === 1 ? '' : 's'}`,
      sentence: `This statement ${hiddenWarning(hidden)}. It runs with them, exactly as shown.`,
    },
  };
}

/** Text from the database or an agent (a table name, a reason, a message) made safe to show, without a report. */
export function visibleText(text: string): string {
  return visibleSql(text).text;
}

function isShownAsIs(sql: string, codePoint: number, offset: number, length: number): boolean {
  switch (codePoint) {
    case 0x0d: // CR of a CRLF line end
      return sql.charCodeAt(offset + 1) === 0x0a;
    case ZWJ: // inside an emoji sequence: 👩‍💻
      return (
        PICTOGRAPH.test(codePointBefore(sql, offset)) &&
        PICTOGRAPH.test(String.fromCodePoint(sql.codePointAt(offset + length) ?? 0))
      );
    case TEXT_PRESENTATION:
    case EMOJI_PRESENTATION: {
      // ❤️ and ©️ take a presentation selector; a digit only as a keycap (1️⃣), never a bare '1' + selector.
      const before = codePointBefore(sql, offset);
      if (KEYCAP_BASE.test(before)) return sql.charCodeAt(offset + length) === COMBINING_KEYCAP;
      return EMOJI.test(before);
    }
    default:
      return false;
  }
}

/** The character before `offset`, skipping one presentation selector (❤️‍🔥 joins after the selector). */
function codePointBefore(sql: string, offset: number): string {
  let end = offset;
  const previous = sql.charCodeAt(end - 1);
  if (previous === TEXT_PRESENTATION || previous === EMOJI_PRESENTATION) end -= 1;
  if (end <= 0) return '';
  const low = sql.charCodeAt(end - 1);
  const start = low >= 0xdc00 && low <= 0xdfff && end >= 2 ? end - 2 : end - 1;
  return String.fromCodePoint(sql.codePointAt(start) ?? 0);
}

/** C0 controls and DEL as their Control Pictures (U+2400…); everything else as ⟨U+XXXX⟩. */
function standIn(codePoint: number): string {
  if (codePoint < 0x20) return String.fromCodePoint(0x2400 + codePoint);
  if (codePoint === 0x7f) return '␡';
  return `⟨${hex(codePoint)}⟩`;
}

function nameOf(codePoint: number): string {
  if (codePoint < 0x20) return C0_NAMES[codePoint] ?? hex(codePoint);
  const name = NAMES[codePoint];
  if (codePoint === 0x7f || (codePoint >= 0x80 && codePoint < 0xa0 && name !== undefined))
    return name ?? hex(codePoint);
  return name === undefined ? hex(codePoint) : `${hex(codePoint)} ${name}`;
}

function hex(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

function startsOfLines(sql: string): number[] {
  const starts = [0];
  for (let i = sql.indexOf('\n'); i !== -1; i = sql.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line of an offset, by binary search over the line starts. */
function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** What a person is shown is what runs: every hidden character of SQL shown visibly and reported (SPEC §5 3a). */
import { describe, expect, it } from 'vitest';
import { hiddenWarning, statementView, visibleSql, visibleText } from '../../../src/shared/visibleSql';

const ESC = '\u001b';

/** What `sql` shows and the names it reports. */
function shown(sql: string): { text: string; names: string[] } {
  const v = visibleSql(sql);
  return { text: v.text, names: v.hidden.map((h) => h.name) };
}

describe('visibleSql', () => {
  it('leaves a statement with nothing hidden unchanged and unflagged, tabs and line ends included', () => {
    const sql = "UPDATE items\n\tSET tag = 'reviewed' -- by ana\r\nWHERE id = 7; /* ünïcødé, 日本語, Ελληνικά */";
    expect(visibleSql(sql)).toEqual({ text: sql, hidden: [] });
    expect(visibleSql('')).toEqual({ text: '', hidden: [] });
  });

  it('shows the terminal spoof of issue 22 (ESC[2K + CR) with the decoy and the real statement both visible', () => {
    const sql = `UPDATE items SET tag = 'owned-by-agent' -- ${ESC}[2K\rUPDATE items SET tag = 'reviewed'`;
    const v = visibleSql(sql);
    expect(v.text).toBe("UPDATE items SET tag = 'owned-by-agent' -- ␛[2K␍UPDATE items SET tag = 'reviewed'");
    expect(v.hidden.map((h) => [h.name, h.shownAs, h.line, h.column, h.offset, h.length])).toEqual([
      ['ESC', '␛', 1, 44, 43, 1],
      ['CR', '␍', 1, 48, 47, 1],
    ]);
    expect(hiddenWarning(v.hidden)).toBe(
      'contains 2 hidden characters: ESC at line 1, CR at line 1 — shown as ␛ and ␍',
    );
  });

  it('shows every C0 control but LF and TAB as its Control Picture, DEL as ␡', () => {
    for (let cp = 0; cp < 0x20; cp++) {
      if (cp === 0x09 || cp === 0x0a) continue;
      const v = visibleSql(`a${String.fromCharCode(cp)}b`);
      expect(v.text, `U+${cp.toString(16)}`).toBe(`a${String.fromCodePoint(0x2400 + cp)}b`);
      expect(v.hidden).toHaveLength(1);
    }
    expect(shown('BS\b\b\bDEL\u007f')).toEqual({ text: 'BS␈␈␈DEL␡', names: ['BS', 'BS', 'BS', 'DEL'] });
    expect(shown('\u0000\u000b\u000c')).toEqual({ text: '␀␋␌', names: ['NUL', 'VT', 'FF'] });
  });

  it('shows C1 controls, CSI (U+009B) and NEL included, as ⟨U+…⟩', () => {
    for (let cp = 0x80; cp <= 0x9f; cp++) {
      expect(visibleSql(String.fromCharCode(cp)).text).toBe(`⟨U+00${cp.toString(16).toUpperCase()}⟩`);
    }
    expect(shown('\u009b2K\u0085')).toEqual({ text: '⟨U+009B⟩2K⟨U+0085⟩', names: ['CSI', 'NEL'] });
  });

  it('shows a lone CR, but keeps CRLF as a line end', () => {
    expect(shown('a\rb')).toEqual({ text: 'a␍b', names: ['CR'] });
    expect(shown('a\r\r\nb\r')).toEqual({ text: 'a␍\r\nb␍', names: ['CR', 'CR'] });
    expect(visibleSql('a\r\nb').hidden).toEqual([]);
  });

  it('shows bidi controls: overrides, embeddings, isolates and marks', () => {
    const bidi = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
    for (const cp of bidi) {
      const v = visibleSql(`x${String.fromCodePoint(cp)}y`);
      expect(v.text).toBe(`x⟨U+${cp.toString(16).toUpperCase().padStart(4, '0')}⟩y`);
      expect(v.hidden).toHaveLength(1);
    }
    // The classic "Trojan Source" comment: the override makes the end of the comment look like code.
    const trojan = 'DELETE FROM t /* \u202e } ;1 = di EREHW \u2066 */';
    expect(visibleSql(trojan).text).toBe('DELETE FROM t /* ⟨U+202E⟩ } ;1 = di EREHW ⟨U+2066⟩ */');
    expect(hiddenWarning(visibleSql(trojan).hidden)).toContain('U+202E RIGHT-TO-LEFT OVERRIDE at line 1');
  });

  it('shows zero-width and other invisible characters, in comments and string literals alike', () => {
    const invisible = [
      0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad, 0x180e, 0x034f, 0x115f, 0x17b4, 0x2800, 0x3164, 0xfe00, 0xe0041,
      0xe0100,
    ];
    for (const cp of invisible) {
      const v = visibleSql(`'a${String.fromCodePoint(cp)}b' -- c${String.fromCodePoint(cp)}d`);
      const stand = `⟨U+${cp.toString(16).toUpperCase().padStart(4, '0')}⟩`;
      expect(v.text, stand).toBe(`'a${stand}b' -- c${stand}d`);
      expect(v.hidden).toHaveLength(2);
    }
  });

  it('shows line and paragraph separators and every space but U+0020 (a look-alike in a literal stores something else)', () => {
    expect(shown('a\u2028b\u2029c')).toEqual({
      text: 'a⟨U+2028⟩b⟨U+2029⟩c',
      names: ['U+2028 LINE SEPARATOR', 'U+2029 PARAGRAPH SEPARATOR'],
    });
    for (const cp of [0x00a0, 0x1680, 0x2000, 0x2007, 0x200a, 0x202f, 0x205f, 0x3000]) {
      expect(visibleSql(`'owned${String.fromCodePoint(cp)}by'`).hidden, cp.toString(16)).toHaveLength(1);
    }
  });

  it('shows a lone surrogate (not a character a person can see)', () => {
    expect(shown('a\ud800b\udfffc')).toEqual({ text: 'a⟨U+D800⟩b⟨U+DFFF⟩c', names: ['U+D800', 'U+DFFF'] });
  });

  it('leaves astral characters and emoji alone, with the joiners and selectors they are built from', () => {
    const emoji = "SELECT '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🐘 👩‍💻 👨‍👩‍👧 ❤️ ❤️‍🔥 1️⃣ #️⃣ ©️ 🇫🇷 👍🏽 🏳️‍🌈 𠜎'";
    expect(visibleSql(emoji)).toEqual({ text: emoji, hidden: [] });
  });

  it('flags the same joiner and selectors outside an emoji', () => {
    expect(shown('ab\u200dcd')).toEqual({ text: 'ab⟨U+200D⟩cd', names: ['U+200D ZERO WIDTH JOINER'] });
    expect(visibleSql("'1\ufe0f'").hidden).toHaveLength(1);
    expect(visibleSql("'reviewed\ufe0f'").hidden).toHaveLength(1);
    expect(visibleSql('\ufe0fstart').hidden).toHaveLength(1);
    expect(visibleSql('🐘\u200d').hidden).toHaveLength(1);
  });

  it('gives lines and columns in code points, so an emoji before it counts once', () => {
    const v = visibleSql(`SELECT 1;\n-- 🐘🐘 x${ESC}y\n\n\u202e`);
    expect(v.hidden.map((h) => [h.line, h.column])).toEqual([
      [2, 8],
      [4, 1],
    ]);
    expect(v.hidden[0]?.offset).toBe(`SELECT 1;\n-- 🐘🐘 x`.length);
  });

  it('leaves nothing a terminal or a browser would act on, whatever the code point', () => {
    const acting = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp === 0x09 || cp === 0x0a) continue;
      const char = String.fromCodePoint(cp);
      if (!acting.test(char) && !/\p{Zs}/u.test(char)) continue;
      if (cp === 0x20) continue;
      const v = visibleSql(`x${char}y`);
      if (v.hidden.length !== 1 || acting.test(v.text))
        throw new Error(`U+${cp.toString(16)} is not shown: ${JSON.stringify(v.text)}`);
    }
  });

  it('says how many, where and as what; lists the first four and counts the rest', () => {
    expect(hiddenWarning([])).toBe('');
    const one = visibleSql('a\u200bb').hidden;
    expect(hiddenWarning(one)).toBe(
      'contains 1 hidden character: U+200B ZERO WIDTH SPACE at line 1 — shown as ⟨U+200B⟩',
    );
    const many = visibleSql(`${ESC}\n${ESC}\n${ESC}\n${ESC}\n\u202e\n${ESC}`).hidden;
    expect(hiddenWarning(many)).toBe(
      'contains 6 hidden characters: ESC at line 1, ESC at line 2, ESC at line 3, ESC at line 4, 2 more — shown as ␛ and ⟨U+202E⟩',
    );
  });

  it('visibleText is the same text without the report', () => {
    expect(visibleText(`tab${ESC}le`)).toBe('tab␛le');
  });
});

describe('statementView (the card of a write, the panel, the cockpit)', () => {
  it('a plain statement: its text, no flag', () => {
    expect(statementView('DELETE FROM t WHERE id = 1')).toEqual({ text: 'DELETE FROM t WHERE id = 1', flag: null });
  });

  it('a statement with hidden characters: visible text, a badge and the sentence naming them', () => {
    expect(statementView(`DELETE FROM t -- ${ESC}[2K\rSELECT 1`)).toEqual({
      text: 'DELETE FROM t -- ␛[2K␍SELECT 1',
      flag: {
        badge: '⚠ 2 hidden characters',
        sentence:
          'This statement contains 2 hidden characters: ESC at line 1, CR at line 1 — shown as ␛ and ␍. It runs with them, exactly as shown.',
      },
    });
    expect(statementView('a\u200bb').flag?.badge).toBe('⚠ 1 hidden character');
  });
});

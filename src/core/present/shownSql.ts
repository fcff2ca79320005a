/**
 * A statement as a terminal shows it where a person decides: every hidden character made visible
 * (shared/visibleSql) and, when there was any, a flag line under it. Terminals obey ESC, CR and friends,
 * so raw SQL printed here could show one statement while another runs (issue 22).
 */
import type { HiddenCharacter } from '../../shared/visibleSql';
import { hiddenWarning, visibleSql } from '../../shared/visibleSql';

export interface ShownStatement {
  /** The visible statement, followed by its flag line when it is flagged. */
  text: string;
  hidden: HiddenCharacter[];
}

export function shownStatement(sql: string): ShownStatement {
  const { text, hidden } = visibleSql(sql);
  return { text: hidden.length === 0 ? text : `${text}\n${flagLine(hidden)}`, hidden };
}

export function flagLine(hidden: readonly HiddenCharacter[]): string {
  return `! HIDDEN CHARACTERS: this statement ${hiddenWarning(hidden)}. It runs exactly as shown here, stand-ins included.`;
}

/** One line of a statement for a list: whitespace runs made one space after the hidden characters were made visible. */
export function shownOneLine(sql: string, max = 60): string {
  const { text, hidden } = visibleSql(sql);
  const line = `${hidden.length > 0 ? '[hidden chars] ' : ''}${text.replace(/[ \t\r\n]+/g, ' ').trim()}`;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * A held statement that sets a password, as the guard keeps it: the password replaced by its SCRAM verifier
 * (core/sql/secrets/hidePasswords.ts) before the impact, the ticket or the proposal file see it. The salt of an
 * earlier ticket of the same text is reused, so that a client's identical retry finds its ticket.
 */
import type { Db } from '../../core/db/db';
import type { Classification } from '../../core/sql/classification';
import { parseSql } from '../../core/sql/parse';
import type { ParsedInput } from '../../core/sql/parse';
import { checkParsed } from '../../core/sql/reach/checkSql';
import { hidePasswords, passwordShapeKey } from '../../core/sql/secrets/hidePasswords';

export interface HeldText {
  sql: string;
  classification: Classification;
  /** The roles whose password it sets (empty for every other statement). */
  passwordsSet: string[];
  /** What its tickets are found by (`TicketStore.findLive`): its text without the passwords; absent: its sqlHash. */
  matchKey?: string;
  /** The parse of `sql` when it was rewritten here (else the caller's parse of the text it gave holds). */
  parsed?: ParsedInput;
}

/**
 * `sql` as the guard holds it; unchanged (and not parsed again) unless its tree sets a password. `earlier`: the SQL
 * of the live tickets found by a match key, whose salts are tried.
 */
export async function heldText(
  db: () => Promise<Db>,
  sql: string,
  classification: Classification,
  earlier: (matchKey: string) => Promise<string[]>,
  /** The parse of exactly `sql`, when the caller has it. */
  given?: ParsedInput,
): Promise<HeldText> {
  if (!classification.statements.some((s) => s.kind === 'AlterRoleStmt' || s.kind === 'CreateRoleStmt'))
    return { sql, classification, passwordsSet: [] };
  const parsed = given?.input === sql ? given : parseSql(sql);
  const matchKey = passwordShapeKey(parsed);
  if (matchKey === undefined) return { sql, classification, passwordsSet: [] };
  const hidden = hidePasswords(parsed, await earlier(matchKey));
  if (!hidden) return { sql, classification, passwordsSet: [] };
  return {
    sql: hidden.sql,
    classification: await checkParsed(await db(), hidden.parsed),
    passwordsSet: hidden.roles,
    matchKey,
    parsed: hidden.parsed,
  };
}

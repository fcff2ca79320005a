/**
 * What a statement may do to the session it runs in beyond its own transaction, read from the judge's parse
 * (never from words in its text, which a string literal, a comment or a quoted name fakes or hides): what a
 * transaction pool (pool/pooledUpstream.ts) must know to keep each client's settings and state its own.
 */
import type { ParsedStatement } from '../../core/sql/parse';
import { walkObjects } from '../../core/sql/parseTree';

export interface SessionTouch {
  /** May change a pooled setting (SET, RESET, set_config): the settings are read back after it. */
  sets: boolean;
  /** May leave state that keeps the session, or end it (LISTEN, a cursor WITH HOLD, CLOSE, an advisory lock, a temporary table, DROP). */
  pins: boolean;
  /** DEALLOCATE ALL: the client's own prepared statements are gone. */
  deallocatesAll: boolean;
  /** The message is one `DEALLOCATE name` and nothing else: that name (a pool answers it for the client's own statement). */
  deallocatesOne?: string;
}

/** Touches nothing beyond its transaction. */
export const UNTOUCHED: SessionTouch = Object.freeze({
  sets: false,
  pins: false,
  deallocatesAll: false,
});
/** Not known (the guard's own query, a statement measured in a transaction that may commit): everything is read back. */
export const MAY_TOUCH_ALL: SessionTouch = Object.freeze({
  sets: true,
  pins: true,
  deallocatesAll: false,
});

/** DeclareCursorStmt.options: CURSOR_OPT_HOLD (PostgreSQL's parsenodes.h). */
const CURSOR_OPT_HOLD = 0x20;
const PINNING_KINDS = new Set(['ListenStmt', 'UnlistenStmt', 'ClosePortalStmt', 'DropStmt', 'DiscardStmt']);

type Rec = Record<string, unknown>;

/** The touch of the statements of one message. */
export function sessionTouchOf(statements: readonly ParsedStatement[]): SessionTouch {
  let sets = false;
  let pins = false;
  let deallocatesAll = false;
  let deallocatesOne: string | undefined;
  for (const statement of statements) {
    const node = (statement.tree as Rec)[statement.kind] as Rec | undefined;
    if (statement.kind === 'VariableSetStmt' || statement.kind === 'DiscardStmt') sets = true;
    if (PINNING_KINDS.has(statement.kind)) pins = true;
    if (statement.kind === 'DeclareCursorStmt' && (Number(node?.options) & CURSOR_OPT_HOLD) !== 0) pins = true;
    if (statement.kind === 'DeallocateStmt') {
      if (node?.isall === true || typeof node?.name !== 'string') deallocatesAll = true;
      else if (statements.length === 1) deallocatesOne = node.name;
    }
    walkObjects(statement.tree, (value) => {
      const call = value.FuncCall as { funcname?: { String?: { sval?: string } }[] } | undefined;
      const name = call?.funcname?.at(-1)?.String?.sval?.toLowerCase();
      if (name === 'set_config') sets = true;
      if (name?.startsWith('pg_advisory') || name?.startsWith('pg_try_advisory')) pins = true;
      // A temporary table: TEMP, or a name in pg_temp.
      if (
        value.relpersistence === 't' ||
        (typeof value.schemaname === 'string' && value.schemaname.startsWith('pg_temp'))
      )
        pins = true;
      return Object.values(value);
    });
  }
  if (!sets && !pins && !deallocatesAll && deallocatesOne === undefined) return UNTOUCHED;
  return { sets, pins, deallocatesAll, ...(deallocatesOne !== undefined ? { deallocatesOne } : {}) };
}

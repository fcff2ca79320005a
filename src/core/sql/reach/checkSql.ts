/**
 * The one check every path runs before SQL touches a database (SPEC §5 1, 1a): the parser's classification,
 * then the reach of each statement into the database's own code, merged into one verdict. A read whose reach
 * has an effect is no longer a read; a write whose reach ROLLBACK cannot undo is not previewed.
 */
import type { Db } from '../../db/db';
import { AgentError } from '../../platform/errors';
import type { Classification } from '../classification';
import { classifyParsed } from '../classify';
import { loadParser, parseSql } from '../parse';
import type { ParsedInput, ParsedStatement } from '../parse';
import { reachOf } from './reachOf';
import { hidePasswords } from '../secrets/hidePasswords';
import type { ReachOptions } from './reachOf';
import { blockingEffects, mergeReach } from './reachVerdicts';
import type { ReachEffect } from '../../../shared/reachTypes';

/**
 * SQL checked once, with what the check found on the way: the parse (trees, statement by statement, in the
 * order of `classification.statements`) and, when a validation EXPLAINed it, the planner's row estimate of
 * its first statement. Carried in memory from the check to the step that runs or previews the SQL (runSql's
 * `checked`), never read back from a file: whoever holds one has checked exactly `sql` on `db`.
 */
export interface CheckedSql {
  db: Db;
  /** The SQL as checked and kept: the input, with any password replaced by its SCRAM verifier (hidePasswords). */
  sql: string;
  /** The input as it came, when it differs from `sql` (it set a password): never stored, only compared. */
  typed?: string;
  /** The roles whose password `sql` sets (shown as a warning instead of the text). */
  passwordsSet?: string[];
  parsed: ParsedInput;
  classification: Classification;
  /** The rows the planner expects the first statement to write (a data change), before anything ran. */
  firstPlannedRows?: number | null;
}

/** Classifies `sql` and checks its reach on `db`. Throws like classifySql, and like the database. */
export async function checkSql(db: Db, sql: string, options: ReachOptions = {}): Promise<Classification> {
  return (await checkSqlParsed(db, sql, options)).classification;
}

/** checkSql, keeping the parse for the steps that follow (impact's lock model), so they do not parse again. */
export async function checkSqlParsed(db: Db, sql: string, options: ReachOptions = {}): Promise<CheckedSql> {
  await loadParser();
  const first = parseSql(sql);
  const hidden = hidePasswords(first);
  const parsed = hidden?.parsed ?? first;
  const classification = await checkParsed(db, parsed, options);
  if (!hidden) return { db, sql, parsed, classification };
  return { db, sql: hidden.sql, typed: sql, passwordsSet: hidden.roles, parsed, classification };
}

/** checkSql of an input the caller has parsed already (parseSql), so that it is not parsed twice. */
export async function checkParsed(db: Db, parsed: ParsedInput, options: ReachOptions = {}): Promise<Classification> {
  const classification = classifyParsed(parsed);
  // A refused input never runs anywhere: nothing of the database's code to look at.
  if (classification.decision === 'refuse') return classification;
  return mergeReach(classification, await reachOf(db, parsed.statements, options));
}

/** `checked` when it is the check of exactly `sql` on `db`; else the check made now. */
export async function checkedFor(db: Db, sql: string, checked: CheckedSql | undefined): Promise<CheckedSql> {
  return checked !== undefined && checked.db === db && (checked.sql === sql || checked.typed === sql)
    ? checked
    : checkSqlParsed(db, sql);
}

/**
 * The classification with reach, computed when a caller classified with the parser alone (an older path, a
 * test): each statement is parsed again on its own, so nothing runs unchecked.
 */
export async function withReach(db: Db, classification: Classification): Promise<Classification> {
  if (classification.decision === 'refuse' || classification.statements.every((s) => s.reach !== undefined))
    return classification;
  await loadParser();
  const parsed: ParsedStatement[] = classification.statements.map((s) => {
    const [only] = parseSql(s.sql).statements;
    if (!only) throw new Error(`A classified statement no longer parses alone: ${s.sql.slice(0, 80)}`);
    return only;
  });
  return mergeReach(classification, await reachOf(db, parsed));
}

/**
 * Refuses (SQL_REFUSED) to run `statementSql` as a read or to EXPLAIN it when its reach does anything:
 * the guard inside runRead, EXPLAIN and validation, whoever called them (SPEC §5 1a).
 */
export async function assertReachAllows(db: Db, statementSql: string, purpose: 'read' | 'explain'): Promise<void> {
  await loadParser();
  const { statements } = parseSql(statementSql);
  // Sent as simple query text, a second statement would run too: the guard looks at one, so it takes one.
  if (statements.length !== 1) {
    throw new AgentError(
      'SQL_REFUSED',
      `Not run: a read or an EXPLAIN takes one statement; this text has ${statements.length}.`,
      'Send each statement on its own.',
    );
  }
  const [reach] = await reachOf(db, statements);
  refuseEffects(reach?.effects ?? [], purpose);
}

/** Throws the refusal when `effects` stop a read (any effect) or an EXPLAIN (those blocking a preview). */
export function refuseEffects(effects: readonly ReachEffect[], purpose: 'read' | 'explain'): void {
  const stopping = purpose === 'read' ? effects : blockingEffects({ reachEffects: [...effects] });
  if (stopping.length > 0) throw reachRefusal(stopping, purpose);
}

export function reachRefusal(effects: readonly ReachEffect[], purpose: 'read' | 'explain'): AgentError {
  const what = effects.map((e) => e.reason).join('; ');
  return purpose === 'read'
    ? new AgentError(
        'SQL_REFUSED',
        `Not run as a read: ${what}.`,
        "The database's own code makes this more than a read. Send it as a write (Run SQL with Review, pg-agent sql, propose_write): it is then held for approval with its impact.",
      )
    : new AgentError(
        'SQL_REFUSED',
        `Not explained: planning may run the database's own code, and ${what}.`,
        'EXPLAIN evaluates functions while planning (labels such as IMMUTABLE can lie). Look at the functions named above, or send the statement for review to see its predicted impact.',
      );
}

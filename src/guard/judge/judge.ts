/**
 * What the guard does with one client message's SQL (SPEC §5 1, 1a, 8): THE one check every path runs
 * (core/sql/reach/checkSql.ts) decides reads from the rest; transaction control, which the safety path
 * refuses because it owns its transactions, follows the guard's own rule here, since the client owns its
 * session: BEGIN/COMMIT/ROLLBACK/SAVEPOINT pass (the upstream session is read-only by default, so a
 * transaction the client opens can only read), anything that would make a transaction writable is held.
 */
import type { Db } from '../../core/db/db';
import type { Classification, StatementClassification } from '../../core/sql/classification';
import { loadParser, parseSql, SqlSyntaxError } from '../../core/sql/parse';
import type { ParsedInput, ParsedStatement } from '../../core/sql/parse';
import { checkParsed, checkSql } from '../../core/sql/reach/checkSql';
import type { CheckedSql } from '../../core/sql/reach/checkSql';
import { currentReachEngine, recentReachEngine } from '../../core/sql/reach/reachOf';
import type { PassCache } from './verdictCache';
import { numbersAreConstants, passCacheOf, statementKey } from './verdictCache';
import { readOfCopyToStdout } from './copyStatement';
import type { SessionTouch } from './sessionTouch';
import { sessionTouchOf, UNTOUCHED } from './sessionTouch';

export type Verdict =
  /**
   * Every statement is a read (or transaction control the guard lets pass): the client's bytes go upstream.
   * `touch`: what they may do to the session beyond their transaction (absent: not known, all of it).
   */
  | { kind: 'pass'; touch?: SessionTouch }
  /**
   * Not a read: a ticket, and the identical text runs once approved. `checked`: the check of exactly this text
   * (its parse), carried to the impact and the approved run so that they do not parse it again.
   */
  | { kind: 'hold'; classification: Classification; checked?: CheckedSql }
  /** Never runs through the guard. */
  | { kind: 'refuse'; reasons: string[] }
  /** PostgreSQL's grammar does not accept it: answered here, never sent (a server that parsed it differently could run it). */
  | { kind: 'syntax'; message: string; position: number };

/**
 * How long a checked code version is trusted before it is asked again (core/sql/reach/codeVersion.ts asks
 * the catalog, about a millisecond, which would be most of a read's cost through the guard). A function
 * replaced directly in the database (never through the guard: DDL through it is held, and the guard forgets
 * the version after running an approved statement) may be judged by its old body for this long; the
 * client's upstream session is read-only all the same.
 */
export const VERSION_MAX_AGE_MS = 100;
const REACH = { versionMaxAgeMs: VERSION_MAX_AGE_MS };

export async function judgeSql(db: Db, sql: string): Promise<Verdict> {
  await loadParser();
  const key = statementKey(sql);
  let cache: PassCache | undefined;
  if (key) {
    try {
      cache = passCacheOf(await currentReachEngine(db, REACH));
    } catch {
      // The catalog cannot be read now: judged in full below (where reach says the code is unknown).
    }
    const touch = cache?.get(key.key);
    if (touch) return passOf(touch);
  }
  let parsed: ParsedInput;
  try {
    parsed = parseSql(sql);
  } catch (error) {
    if (error instanceof SqlSyntaxError) return { kind: 'syntax', message: error.message, position: error.position };
    throw error;
  }
  const verdict = await judgeParsed(db, parsed);
  if (verdict.kind !== 'pass') return verdict;
  const touch = sessionTouchOf(parsed.statements);
  if (key && cache && numbersAreConstants(parsed, key.numbers)) cache.add(key.key, touch);
  return passOf(touch);
}

const PASS: Verdict = { kind: 'pass', touch: UNTOUCHED };

function passOf(touch: SessionTouch): Verdict {
  return touch === UNTOUCHED ? PASS : { kind: 'pass', touch };
}

/**
 * The 'pass' judgeSql would answer from the verdict cache now, without asking the database (the code version
 * checked within VERSION_MAX_AGE_MS, its engine loaded): the session's synchronous path for a read seen before.
 * Undefined says nothing: judgeSql decides.
 */
export function passedBefore(db: Db, sql: string): Verdict | undefined {
  const recent = recentReachEngine(db, VERSION_MAX_AGE_MS);
  if (!recent) return undefined;
  // Checked again before it is due, so that reads keep this path instead of all waiting for the check at once.
  if (recent.checkedMsAgo > VERSION_MAX_AGE_MS / 2) checkVersionSoon(db);
  const key = statementKey(sql);
  const touch = key && passCacheOf(recent.engine).get(key.key);
  return touch ? passOf(touch) : undefined;
}

const checking = new WeakSet<Db>();

function checkVersionSoon(db: Db): void {
  if (checking.has(db)) return;
  checking.add(db);
  currentReachEngine(db, { versionMaxAgeMs: VERSION_MAX_AGE_MS / 2 })
    .catch(() => undefined)
    .finally(() => checking.delete(db));
}

async function judgeParsed(db: Db, parsed: ParsedInput): Promise<Verdict> {
  const { statements } = parsed;
  if (statements.length === 0) return { kind: 'pass' };
  const sessionProblem = statements.map(sessionChangeProblem).find((p) => p !== undefined);
  if (sessionProblem) return { kind: 'refuse', reasons: [sessionProblem] };
  const control = statements.filter((s) => s.kind === 'TransactionStmt' || isHarmlessSet(s));
  if (control.length === 0)
    return (
      (await copyToStdoutVerdict(db, statements)) ?? verdictOf(await checkParsed(db, parsed, REACH), { db, parsed })
    );
  const refused = control
    .filter((s) => s.kind === 'TransactionStmt')
    .map(transactionControlProblem)
    .filter((p): p is string => p !== undefined);
  if (refused.length > 0) return { kind: 'refuse', reasons: refused };
  const others = statements.filter((s) => !control.includes(s));
  for (const statement of others) {
    const verdict = verdictOf(await checkSql(db, readOfCopyToStdout(statement) ?? statement.sql, REACH));
    if (verdict.kind === 'refuse') return verdict;
    if (verdict.kind === 'hold') {
      return {
        kind: 'refuse',
        reasons: [
          `this message mixes transaction control (${control.map((s) => s.sql.split(/\s/)[0]!.toUpperCase()).join(', ')}) with a statement that is not a read (${verdict.classification.reasons[0] ?? statement.kind})`,
        ],
      };
    }
  }
  return { kind: 'pass' };
}

/**
 * With a `COPY … TO STDOUT`, each statement is judged alone, the COPY as the read of the same rows
 * (copyStatement.ts): pass when all pass, refused when one is; otherwise undefined (the COPY is held as itself).
 */
async function copyToStdoutVerdict(db: Db, statements: readonly ParsedStatement[]): Promise<Verdict | undefined> {
  const reads = statements.map(readOfCopyToStdout);
  if (reads.every((r) => r === undefined)) return undefined;
  let pass = true;
  for (const [i, statement] of statements.entries()) {
    const verdict = verdictOf(await checkSql(db, reads[i] ?? statement.sql, REACH));
    if (verdict.kind === 'refuse') return verdict;
    pass &&= verdict.kind === 'pass';
  }
  return pass ? { kind: 'pass' } : undefined;
}

function verdictOf(classification: Classification, check?: { db: Db; parsed: ParsedInput }): Verdict {
  if (classification.statements.some((s) => s.decision === 'refuse'))
    return { kind: 'refuse', reasons: classification.reasons };
  if (classification.statements.every((s) => s.decision === 'run' || isCursorRead(s))) return { kind: 'pass' };
  if (!check) return { kind: 'hold', classification };
  const checked: CheckedSql = { db: check.db, sql: check.parsed.input, parsed: check.parsed, classification };
  return { kind: 'hold', classification, checked };
}

const CURSOR_KINDS = new Set(['DeclareCursorStmt', 'FetchStmt', 'ClosePortalStmt']);

/**
 * A cursor over a read (DECLARE … FOR SELECT, FETCH, MOVE, CLOSE) in the client's own session: the safety path
 * holds it as a session change (it owns its sessions), the guard passes it as the read it is. Its query went
 * through the same reach analysis: a cursor whose query reaches a side effect or a write is held.
 */
function isCursorRead(statement: StatementClassification): boolean {
  return (
    CURSOR_KINDS.has(statement.kind) &&
    statement.class === 'session' &&
    statement.sideEffects.length === 0 &&
    (statement.reachEffects ?? []).length === 0
  );
}

type Rec = Record<string, unknown>;
const rec = (value: unknown): Rec => (value !== null && typeof value === 'object' ? (value as Rec) : {});
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Why a transaction control statement may not pass, or undefined when it may. */
export function transactionControlProblem(statement: ParsedStatement): string | undefined {
  const node = rec(rec(statement.tree).TransactionStmt);
  const kind = text(node.kind).replace('TRANS_STMT_', '');
  switch (kind) {
    case 'BEGIN':
    case 'START': {
      const options = Array.isArray(node.options) ? node.options : [];
      for (const option of options) {
        const def = rec(rec(option).DefElem);
        if (def.defname === 'transaction_read_only' && !readOnlyArg(def.arg)) {
          return `${statement.sql.split(/\s/)[0]!.toUpperCase()} READ WRITE would let the transaction write: the guard's sessions only read (send writes on their own, they are held for approval)`;
        }
      }
      return undefined;
    }
    case 'COMMIT':
    case 'ROLLBACK':
    case 'SAVEPOINT':
    case 'RELEASE':
    case 'ROLLBACK_TO':
      return undefined;
    default:
      return `${statement.sql.slice(0, 40)} (two-phase commit) does not pass through the guard`;
  }
}

/** transaction_read_only's argument: `READ ONLY` is 1 (true), `READ WRITE` 0. */
function readOnlyArg(arg: unknown): boolean {
  const constant = rec(rec(arg).A_Const);
  const ival = rec(constant.ival);
  return ival.ival === 1;
}

/**
 * Settings a client may change in its own session: they shape output, messages and timeouts, never how
 * the server reads SQL or which objects a name resolves to (search_path, role, session_replication_role…).
 * `jit` only decides whether a plan is compiled before it runs (the code catalog turns it off for its query).
 */
export const HARMLESS_SETTINGS: ReadonlySet<string> = new Set([
  'application_name',
  'client_min_messages',
  'timezone',
  'datestyle',
  'intervalstyle',
  'extra_float_digits',
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'bytea_output',
  'jit',
  'time zone',
]);

function setNode(statement: ParsedStatement): Rec | undefined {
  return statement.kind === 'VariableSetStmt' ? rec(rec(statement.tree).VariableSetStmt) : undefined;
}

/** `SET x = …` / `RESET x` of a harmless setting: runs in the client's own upstream session. */
function isHarmlessSet(statement: ParsedStatement): boolean {
  // Forgetting a prepared statement changes nothing but the client's own list (pools send DEALLOCATE ALL).
  if (statement.kind === 'DeallocateStmt') return true;
  // LISTEN/UNLISTEN change nothing in the database, only which notifications this session receives.
  if (statement.kind === 'ListenStmt' || statement.kind === 'UnlistenStmt') return true;
  const node = setNode(statement);
  if (!node) return false;
  const kind = text(node.kind);
  return (
    HARMLESS_SETTINGS.has(text(node.name).toLowerCase()) &&
    ['VAR_SET_VALUE', 'VAR_SET_DEFAULT', 'VAR_RESET', 'VAR_SET_CURRENT'].includes(kind)
  );
}

/**
 * Any other session change (SET, RESET, DISCARD, PREPARE…) cannot be approved through the guard: an
 * approved statement runs on the guard's executor connection, never in the client's session.
 */
function sessionChangeProblem(statement: ParsedStatement): string | undefined {
  if (isHarmlessSet(statement)) return undefined;
  if (['VariableSetStmt', 'DiscardStmt', 'PrepareStmt', 'ExecuteStmt'].includes(statement.kind)) {
    return `${statement.sql.slice(0, 60)} would change this session's settings or state, which the guard does not let a client change (an approval would run it on another connection)`;
  }
  return undefined;
}

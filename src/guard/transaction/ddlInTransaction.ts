/**
 * DDL inside a measured client transaction (README, guard section; SPEC §5 4a): it runs for real in the
 * client's own upstream transaction only when the core's DDL analysis (core/sql/ddl/ddlAnalysis.ts, read
 * from the guard's own session, so objects this transaction created are not there yet) says it is cheap:
 * - it runs inside a transaction (no CONCURRENTLY, VACUUM, ALTER TYPE … ADD VALUE) and the lock model knows it
 *   (or it only creates a new object: schema, sequence, type, domain, function);
 * - on every table that exists outside this transaction, its lock blocks nothing, or the table is small
 *   (SizeThresholds.smallTableRows) and it rewrites nothing.
 * Objects the transaction created itself are invisible to other sessions: locking them blocks no one. It runs
 * under `lock_timeout` of at most 250 ms (settings.ddlLockTimeoutMs), so waiting for its lock never queues
 * other sessions for longer; the lock is held until the guard's ROLLBACK (or approved COMMIT) at the client's
 * COMMIT. What never runs to be measured (a ROLLBACK does not undo it, or it runs only outside a transaction)
 * is refused (PA002). **Heavy** DDL (a rewrite or a strong lock on a table that is not small, or a statement
 * the lock model does not know) is analysed, not executed: the transaction is held at that statement on a
 * ticket (heavyDdl.ts), and runs it for real only in an approved retry (heavyBudgetSql, §5 6).
 */
import type { Db } from '../../core/db/db';
import type { StatementClassification } from '../../core/sql/classification';
import type { LockHolder } from '../../core/sql/ddl/lockHolders';
import { analyseDdl } from '../../core/sql/ddl/ddlAnalysis';
import { describeTableSize, tableFacts } from '../../core/sql/ddl/tableSize';
import { whyNotPreviewable } from '../../core/sql/impact';
import { parseSql } from '../../core/sql/parse';
import { rangeVarName, rec } from '../../core/sql/parseTree';
import type { SafetySettings } from '../../core/sql/safetySettings';
import { isCopyFromStdin } from '../copy/copyIn';
import { isDml } from './effectBounds';

/** SPEC §5 4a: no preview blocks another session's reads or writes for more than this. */
export const DDL_LOCK_BUDGET_MS = 250;

/** Statements that only create a new object and lock no existing table, though the lock model does not list them. */
const CREATES_ONLY = new Set([
  'CreateSchemaStmt',
  'CreateSeqStmt',
  'CreateEnumStmt',
  'CompositeTypeStmt',
  'CreateDomainStmt',
  'CreateFunctionStmt',
  'CreateRangeStmt',
]);

export type DdlVerdict =
  /** `notes`: each DDL statement with its 4a analysis, for the ticket. */
  /** `blocking`: a lock it takes blocks other sessions' reads or writes of a table they see. */
  | { run: true; notes: string[]; blocking: boolean }
  /**
   * `heavy`: only heavy DDL stopped it (it could run inside a transaction, approved): its 4a analysis in `why`,
   * and the sessions holding or awaiting a lock it needs (`holders`, from the guard's own session).
   */
  | { run: false; why: string; heavy?: { holders: LockHolder[] } };

/**
 * Whether `statements` (not reads) may run for real in a measured transaction: nothing whose effect a
 * ROLLBACK does not undo (the core's preview rule, whyNotPreviewable; advancing a sequence excepted, as for
 * any measured INSERT), and DDL (every statement that is not DML: maintenance, LOCK…) only when cheap.
 */
export async function judgeDdlInTransaction(
  db: Db,
  statements: readonly StatementClassification[],
  settings: SafetySettings,
): Promise<DdlVerdict> {
  const notes: string[] = [];
  const heavy: string[] = [];
  const holders: LockHolder[] = [];
  let blocking = false;
  for (const statement of statements) {
    const text = shorten(statement.sql);
    // COPY … FROM STDIN loads rows as an INSERT does (the client's data, relayed): judged as one, triggers and all.
    const copyIn = statement.kind === 'CopyStmt' && isCopyFromStdin(statement.sql);
    const irreversible = whyNotPreviewable(
      withoutSequenceAdvance(copyIn ? { ...statement, kind: 'InsertStmt' } : statement),
      true,
    );
    if (irreversible !== undefined) return { run: false, why: `${text} cannot be run to be measured: ${irreversible}` };
    if (isDml(statement.kind) || copyIn) continue;
    if (!statement.transactional)
      return { run: false, why: `${text} runs only outside a transaction, so it cannot be measured and rolled back` };
    const analysis = await db.withSession((session) =>
      analyseDdl(session, [statement], {
        thresholds: settings.policy.thresholds,
        lockTimeoutMs: settings.lockTimeoutMs,
      }),
    );
    const plan = analysis.plans[0];
    if (!plan?.known && !CREATES_ONLY.has(statement.kind)) {
      heavy.push(`the lock model does not know ${statement.kind} (${text})`);
      holders.push(...analysis.lockHolders);
      continue;
    }
    const locks: string[] = [];
    const view = await replacedView(db, statement.sql);
    if (view !== undefined) {
      // The lock model gives CREATE VIEW no lock; replacing a view others see takes ACCESS EXCLUSIVE on it.
      blocking = true;
      locks.push(
        `ACCESS EXCLUSIVE on the view ${view}, blocking its reads until COMMIT; CREATE OR REPLACE VIEW of an existing view`,
      );
    }
    const heavyBefore = heavy.length;
    for (const lock of analysis.locks) {
      const size = describeTableSize({ rows: lock.rows, bytes: lock.bytes ?? 0 });
      const what = `${lock.mode} on ${lock.table} (${size}), blocking its ${lock.blocks}`;
      if (lock.blocks !== 'nothing' && lock.work === 'rewrite')
        heavy.push(`${text} would rewrite ${lock.table} under ${what}`);
      else if (lock.blocks !== 'nothing' && lock.size !== 'small')
        heavy.push(
          `${text} would hold ${what} until the transaction ends (${lock.work === 'scan' ? 'and scan the table' : 'the table is not small'})`,
        );
      if (lock.blocks !== 'nothing') blocking = true;
      locks.push(`${what}${lock.blocks === 'nothing' ? '' : ' until COMMIT'}; ${lock.why}`);
    }
    if (heavy.length > heavyBefore) {
      holders.push(...analysis.lockHolders);
      continue;
    }
    notes.push(
      `DDL run in the measured transaction: ${text} — ${locks.length === 0 ? 'no lock on a table other sessions see (a new object, or one this transaction created)' : locks.join('; ')}.`,
    );
  }
  if (heavy.length > 0) return { run: false, why: heavy.join('; '), heavy: { holders } };
  return { run: true, notes, blocking };
}

/**
 * The in-band statement before DDL runs, local to the transaction (a lower client setting stays): its lock
 * wait is at most the budget; after a lock that blocks others (`blocking`), so is each later statement and
 * each idle pause of the client's transaction (PostgreSQL cancels the statement, or ends a session idle in a
 * transaction longer: the lock goes with the transaction).
 */
export function lockBudgetSql(settings: Pick<SafetySettings, 'ddlLockTimeoutMs'>, blocking: boolean): string {
  const ms = lockWaitMs(settings);
  const after = blocking
    ? `, ${atMost('idle_in_transaction_session_timeout', DDL_LOCK_BUDGET_MS)}, ${atMost('statement_timeout', DDL_LOCK_BUDGET_MS)}`
    : '';
  return `SELECT ${atMost('lock_timeout', ms)}${after}`;
}

/**
 * The in-band statement before APPROVED heavy DDL runs (SPEC §5 6): it waits for its lock at most the lock
 * budget (the client gets 55P03 and retries), its own work is not cut by the 250 ms statement budget an earlier
 * blocking lock set (statement_timeout back to the session's start value), and a pause of the client after it
 * ends the session (idle budget), so the lock goes. lockBudgetSql sets the statement budget again after it.
 */
export function heavyBudgetSql(settings: Pick<SafetySettings, 'ddlLockTimeoutMs'>): string {
  const atStart = `set_config('statement_timeout', (SELECT reset_val || 'ms' FROM pg_settings WHERE name = 'statement_timeout'), true)`;
  return `SELECT ${atMost('lock_timeout', lockWaitMs(settings))}, ${atMost('idle_in_transaction_session_timeout', DDL_LOCK_BUDGET_MS)}, ${atStart}`;
}

/**
 * At the client's COMMIT its part is over: what follows (the ticket store, the claim) is the guard's own work,
 * not a client's pause, so the idle budget of a blocking DDL lock must not end the session under it. The guard
 * rolls back or commits next; should it die, its socket closing ends the session.
 */
export const GUARD_WORK_SQL = "SELECT set_config('idle_in_transaction_session_timeout', '10s', true)";

/** The lock wait of DDL in a client transaction: ddlLockTimeoutMs, at most the 250 ms budget. */
export const lockWaitMs = (settings: Pick<SafetySettings, 'ddlLockTimeoutMs'>): number =>
  Math.max(1, Math.min(settings.ddlLockTimeoutMs, DDL_LOCK_BUDGET_MS));

/** A transaction-local setting at most `limit` ms (0, no limit, counts as above it); a lower one stays. */
const atMost = (name: string, limit: number) =>
  `set_config('${name}', (SELECT CASE WHEN setting::int = 0 OR setting::int > ${limit} THEN '${limit}ms' ELSE setting || 'ms' END FROM pg_settings WHERE name = '${name}'), true)`;

/** The existing view a CREATE OR REPLACE VIEW replaces ("schema.name"), if any. */
async function replacedView(db: Db, sql: string): Promise<string | undefined> {
  const statement = parseSql(sql).statements[0];
  const node = rec(statement?.tree, 'ViewStmt');
  const name = node?.replace === true ? rangeVarName(rec(node, 'view')) : undefined;
  if (name === undefined) return undefined;
  return (await db.withSession((session) => tableFacts(session, name, 'table')))?.table;
}

/** nextval() only spends values (as a measured INSERT's serial default does: the ticket says they are gone); setval() is not this. */
function withoutSequenceAdvance(statement: StatementClassification): StatementClassification {
  if (!statement.sideEffects.every((f) => /(^|\.)nextval$/i.test(f))) return statement;
  return {
    ...statement,
    sideEffects: [],
    reachEffects: (statement.reachEffects ?? []).filter((e) => e.kind !== 'sequence'),
  };
}

function shorten(sql: string): string {
  const oneLine = sql.replace(/\s+/g, ' ').trim();
  return oneLine.length > 160 ? `${oneLine.slice(0, 157)}…` : oneLine;
}

/**
 * Approved DDL never queues everyone behind it (SPEC §5.6, issue 25). A lock request that waits blocks every
 * later request that conflicts with it: an ALTER TABLE waiting behind one `idle in transaction` session
 * stops all reads of the table. So the locks are taken first, each try bounded by a short lock_timeout and
 * rolled back to a savepoint when it runs out (nothing held, nothing queued between tries), retried after a
 * growing pause with jitter; after the last try the statement does not run and the error names who held
 * the lock. Statements that run outside a transaction cannot take locks ahead: for them the sessions in the
 * way are polled (pg_locks, no request) with the same pauses until none is left.
 */
import type { DbSession } from '../../db/db';
import { DbQueryError } from '../../db/dbErrors';
import { AgentError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { describeLockHolder } from '../../../shared/lockPhrases';
import type { StatementClassification } from '../classification';
import type { LockHolder, LockTarget } from './lockHolders';
import { sessionsInTheWay } from './lockHolders';
import { planStatement } from './lockModel';
import { strongest } from './lockModes';
import { tableFacts } from './tableSize';

export interface LockWaitPolicy {
  /** How long one try waits for its locks (lock_timeout), in ms. */
  timeoutMs: number;
  /** How many tries before giving up. */
  attempts: number;
  /** Longest pause between two tries (default 2 s). */
  maxPauseMs?: number;
  /** Injected by tests; default setTimeout and Math.random. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** Who is waiting, for the log and the error's advice. */
export interface LockWaitContext {
  logger?: Logger;
  ticketId?: string;
}

/** What taking the locks cost: tries and time (also when nothing had to wait: 1 try). */
export interface LockWaitOutcome {
  attempts: number;
  waitedMs: number;
}

const SAVEPOINT = 'pgagent_lock_wait';
/** pg_locks can only name relations LOCK TABLE accepts: tables, partitioned tables, views, foreign tables. */
const LOCKABLE = new Set(['r', 'p', 'v', 'f']);

/** The statements that take table locks worth waiting carefully for: DDL and maintenance the lock model knows. */
export function lockedStatements(statements: readonly StatementClassification[]): StatementClassification[] {
  return statements.filter((s) => s.class === 'ddl' || s.class === 'admin');
}

/** The tables and modes the statements need, resolved in the catalog (strongest mode per table). */
export async function lockTargetsOf(
  session: DbSession,
  statements: readonly StatementClassification[],
): Promise<LockTarget[]> {
  const byOid = new Map<number, LockTarget>();
  for (const statement of lockedStatements(statements)) {
    for (const planned of planStatement(statement.sql).locks) {
      const facts = await tableFacts(session, planned.relation, planned.target);
      if (!facts || !LOCKABLE.has(facts.relkind)) continue;
      const seen = byOid.get(facts.oid);
      byOid.set(facts.oid, {
        oid: facts.oid,
        table: facts.table,
        mode: seen ? strongest(seen.mode, planned.mode) : planned.mode,
      });
    }
  }
  // One order for every executor, so two of them never take the same tables in opposite orders.
  return [...byOid.values()].sort((a, b) => a.oid - b.oid);
}

/** The pause before try `attempt + 1`: doubling from the wait itself, capped, with jitter (half to all of it). */
export function pauseBeforeRetry(attempt: number, policy: LockWaitPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxPauseMs ?? 2_000, Math.max(1, policy.timeoutMs) * 2 ** (attempt - 1));
  return Math.round(ceiling * (0.5 + 0.5 * random()));
}

/**
 * Takes every target's lock in the open transaction (they stay held until it ends), each try bounded by
 * `timeoutMs`. Throws LOCK_UNAVAILABLE naming the sessions in the way after the last try; the transaction is
 * then as it was before (the savepoint rolled back). A lock this session may not take (no privilege) is left
 * to the statement itself, which runs under the same short lock_timeout.
 */
export async function takeLocksBriefly(
  session: DbSession,
  targets: readonly LockTarget[],
  policy: LockWaitPolicy,
  context: LockWaitContext = {},
): Promise<LockWaitOutcome> {
  const started = performance.now();
  if (targets.length === 0) return { attempts: 0, waitedMs: 0 };
  const names = await quotedNames(session, targets);
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const attempts = Math.max(1, Math.floor(policy.attempts));
  let inTheWay: LockHolder[] = [];
  for (let attempt = 1; attempt <= attempts; attempt++) {
    await session.query(`SAVEPOINT ${SAVEPOINT}`);
    try {
      await session.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(policy.timeoutMs))}`);
      for (const [oid, name] of names)
        await session.query(
          `LOCK TABLE ${name} IN ${targets.find((t) => t.oid === oid)?.mode ?? 'ACCESS EXCLUSIVE'} MODE`,
        );
      await session.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
      return { attempts: attempt, waitedMs: Math.round(performance.now() - started) };
    } catch (error) {
      await session.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
      await session.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
      if (!(error instanceof DbQueryError) || !RETRIED.has(error.sqlState)) {
        if (error instanceof DbQueryError) {
          context.logger?.warn('could not take the locks ahead; the statement takes them itself', {
            error: error.message,
            sqlState: error.sqlState,
          });
          return { attempts: attempt, waitedMs: Math.round(performance.now() - started) };
        }
        throw error;
      }
      inTheWay = await sessionsInTheWay(session, targets);
      if (attempt < attempts) await sleep(pauseBeforeRetry(attempt, policy, policy.random));
    }
  }
  throw lockUnavailable(targets, inTheWay, policy, attempts, performance.now() - started, context.ticketId);
}

/**
 * For a statement that runs outside a transaction (no lock can be taken ahead): waits, without requesting
 * any lock, until no session holds or awaits a conflicting one, checking up to `attempts` times. Throws
 * LOCK_UNAVAILABLE naming them when they stay.
 */
export async function waitUntilLocksFree(
  session: DbSession,
  targets: readonly LockTarget[],
  policy: LockWaitPolicy,
  context: LockWaitContext = {},
): Promise<LockWaitOutcome> {
  const started = performance.now();
  if (targets.length === 0) return { attempts: 0, waitedMs: 0 };
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const attempts = Math.max(1, Math.floor(policy.attempts));
  let inTheWay: LockHolder[] = [];
  for (let attempt = 1; attempt <= attempts; attempt++) {
    inTheWay = await sessionsInTheWay(session, targets);
    if (inTheWay.length === 0) return { attempts: attempt, waitedMs: Math.round(performance.now() - started) };
    if (attempt < attempts) await sleep(Math.max(policy.timeoutMs, pauseBeforeRetry(attempt, policy, policy.random)));
  }
  throw lockUnavailable(targets, inTheWay, policy, attempts, performance.now() - started, context.ticketId);
}

/** lock_not_available (lock_timeout) and deadlock_detected: another try may succeed. */
const RETRIED = new Set(['55P03', '40P01']);

function lockUnavailable(
  targets: readonly LockTarget[],
  inTheWay: readonly LockHolder[],
  policy: LockWaitPolicy,
  attempts: number,
  elapsedMs: number,
  ticketId?: string,
): AgentError {
  const wanted = targets.map((t) => `${t.mode} on ${t.table}`).join(', ');
  const tries = `${attempts} × ${Math.round(policy.timeoutMs)} ms (${(elapsedMs / 1000).toFixed(1)} s with the pauses between tries)`;
  const behind =
    inTheWay.length === 0
      ? 'behind sessions that were gone by the time they were looked up'
      : `behind ${inTheWay.map(describeLockHolder).join('; ')}`;
  const pids = [...new Set(inTheWay.map((h) => h.pid).filter((p): p is number => p !== null))];
  return new AgentError(
    'LOCK_UNAVAILABLE',
    `Did not run: waited ${tries} for ${wanted} ${behind}. Nothing ran and no one queued behind it; the ticket is still approved.`,
    `Run it again once ${pids.length === 1 ? 'that session has' : 'they have'} finished (pg-agent exec --ticket ${ticketId ?? '<id>'}).` +
      (pids.length > 0
        ? ` If ${pids.length === 1 ? 'it is' : 'they are'} stuck, ending ${pids.length === 1 ? 'it' : 'them'} is your call: SELECT pg_terminate_backend(pid) for ${pids.map((p) => `pid ${p}`).join(', ')}.`
        : ''),
  );
}

async function quotedNames(session: DbSession, targets: readonly LockTarget[]): Promise<Map<number, string>> {
  const result = await session.query<{ oid: number; name: string }>(
    `SELECT c.oid::int8::float8 AS oid, format('%I.%I', n.nspname, c.relname) AS name
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ANY($1::int8[]::oid[])`,
    [targets.map((t) => t.oid)],
  );
  // In the targets' order (by oid); a table dropped since is simply not locked.
  const byOid = new Map(result.rows.map((r) => [r.oid, r.name]));
  const names = new Map<number, string>();
  for (const t of targets) {
    const name = byOid.get(t.oid);
    if (name !== undefined) names.set(t.oid, name);
  }
  return names;
}

/** lock_not_available: a statement's lock_timeout ran out. */
export function isLockTimeout(error: unknown): boolean {
  return error instanceof DbQueryError && error.sqlState === '55P03';
}

/**
 * The error for a statement that ran into its short lock_timeout on a lock the model did not take ahead (after
 * the claim, which was released): the sessions holding any lock on its tables and on the tables they reference
 * or are referenced by (where such locks hide), named as for locks taken ahead.
 */
export async function lockNotForeseen(
  session: DbSession,
  statements: readonly StatementClassification[],
  policy: LockWaitPolicy,
  ticketId: string,
  cause: AgentError,
): Promise<AgentError> {
  const targets = await lockTargetsOf(
    session,
    statements.map((s) => ({ ...s, class: s.class === 'write' ? ('ddl' as const) : s.class })),
  );
  const related = await session.query<{ oid: number; name: string }>(
    `SELECT DISTINCT c.oid::int8::float8 AS oid, n.nspname || '.' || c.relname AS name
     FROM pg_constraint k JOIN pg_class c ON c.oid IN (k.conrelid, k.confrelid) JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE k.contype = 'f' AND (k.conrelid = ANY($1::int8[]::oid[]) OR k.confrelid = ANY($1::int8[]::oid[]))`,
    [targets.map((t) => t.oid)],
  );
  const all: LockTarget[] = [
    ...targets.map((t) => ({ ...t, mode: 'ACCESS EXCLUSIVE' as const })),
    ...related.rows
      .filter((r) => !targets.some((t) => t.oid === r.oid))
      .map((r) => ({ oid: r.oid, table: r.name, mode: 'ACCESS EXCLUSIVE' as const })),
  ];
  const inTheWay = await sessionsInTheWay(session, all);
  const behind =
    inTheWay.length === 0
      ? 'the sessions holding it were gone by the time they were looked up'
      : `sessions holding locks on those tables: ${inTheWay.map(describeLockHolder).join('; ')}`;
  return new AgentError(
    'LOCK_UNAVAILABLE',
    `Did not run: a lock it needed beyond those taken ahead was not free within ${Math.round(policy.timeoutMs)} ms (${cause.message}); ${behind}. It was rolled back before doing anything and no one queued behind it for longer; the ticket is still approved.`,
    `Run it again once they have finished (pg-agent exec --ticket ${ticketId}).`,
    { cause },
  );
}

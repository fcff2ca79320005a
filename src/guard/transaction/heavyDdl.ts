/**
 * Heavy DDL in a measured client transaction (README, guard section, "Heavy DDL"; SPEC §5 4a and 6): a rewrite,
 * a strong lock on a table that is not small, or a statement the lock model does not know. Measuring never
 * runs it: at heavy statement N the guard rolls the transaction back (no lock held while a person decides) and
 * holds statements 1..N on one ticket, N analysed (its template "h:", transactionRecord.ts), the transaction
 * not measured from N on. An APPROVED ticket whose first N templates are the retry's so far, whose statement N
 * is heavy with the identical text, and whose effects cover the retry's so far, lets N run for real in that
 * retry, once its policy and ledger allow it (as the claim checks), no other session holds or awaits a lock it
 * needs, and under a short lock_timeout (the client gets 55P03 and retries). Nothing commits but a transaction
 * whose templates are exactly an approved ticket's, within its bounds (guardedTransaction.ts): a longer retry
 * is rolled back at COMMIT (its heavy work with it: approved, wasted, harmless) and held on a new ticket.
 */
import { assertNotInLedger } from '../../core/approvals/executionLedger';
import { authorizeAtClaim } from '../../core/approvals/policyInForce';
import { authorizeExecution, executionGuards } from '../../core/approvals/signedMode';
import { contentMatchesHash, isGuardTransaction } from '../../core/approvals/ticket';
import type { Ticket } from '../../core/approvals/ticket';
import type { LockHolder } from '../../core/sql/ddl/lockHolders';
import { parseSql } from '../../core/sql/parse';
import { toAgentError } from '../../core/platform/errors';
import type { GuardContext } from '../guardContext';
import type { ErrorFields } from '../wire/backendMessages';
import type { MeasuredTransaction } from './effectBounds';
import { ddlStatementsOf, exceededBounds } from './effectBounds';
import type { RecordedStatement } from './transactionRecord';
import { isHeavyTemplate } from './transactionRecord';

/**
 * How often one approved ticket lets its heavy statement N run in retries (per guard process): a migration
 * needs it once or twice (55P03 retries after the lock check count too); a client that loops over a longer
 * transaction would otherwise repeat the approved rewrite without end. Past it, the retry is held again.
 */
export const MAX_HEAVY_RUNS = 5;
const heavyRuns = new Map<string, number>();
const runKey = (ticketId: string, index: number) => `${ticketId}#${index}`;

/** The approved heavy statement `index` of the ticket is let run once more. */
export function spendHeavyRun(ticketId: string, index: number): void {
  heavyRuns.set(runKey(ticketId, index), (heavyRuns.get(runKey(ticketId, index)) ?? 0) + 1);
}

/** Each statement of `sql` as its own text (the parser's slice); the parser must be loaded. */
const textsOf = (sql: string): string[] => parseSql(sql).statements.map((p) => p.sql.trim());

/**
 * The approved ticket of this connection that lets heavy statement `next` run now: its statements start with
 * the retry's so far (`recorded`, by template) and then `next` (heavy, identical text), and what the retry did
 * so far (rows per table, DDL texts) is within it. The parser must be loaded.
 */
export function approvedPrefix(
  tickets: readonly Ticket[],
  connection: string,
  recorded: readonly RecordedStatement[],
  next: RecordedStatement,
  measured: MeasuredTransaction,
  tolerance: number,
): Ticket | undefined {
  const n = recorded.length;
  return tickets.find((ticket) => {
    const statements = ticket.transaction?.statements ?? [];
    if (
      ticket.status !== 'APPROVED' ||
      ticket.kind !== 'write' ||
      ticket.connection !== connection ||
      !isGuardTransaction(ticket)
    )
      return false;
    if (!contentMatchesHash(ticket) || ticket.decisions.some((d) => d.hash !== ticket.sqlHash)) return false;
    if ((heavyRuns.get(runKey(ticket.id, n)) ?? 0) >= MAX_HEAVY_RUNS) return false;
    const at = statements[n];
    if (!at || !isHeavyTemplate(at.template) || at.template !== next.template) return false;
    if (!recorded.every((s, i) => statements[i]?.template === s.template)) return false;
    if (JSON.stringify(textsOf(at.sql)) !== JSON.stringify(textsOf(next.sql))) return false;
    const approvedDdl = statements.slice(0, n + 1).flatMap((s) => (s.read ? [] : ddlStatementsOf(s.sql)));
    const tables = (ticket.transaction?.effects ?? []).map((e) => ({ ...e, via: 'direct' as const }));
    return (
      exceededBounds(measured, { ...ticket, impact: { ...ticket.impact, tables } }, approvedDdl, tolerance).length === 0
    );
  });
}

/** Why the ticket may not run now (the checks its claim makes, SPEC §5 3a: ledger, signed and in-force policy), or undefined. */
export async function whyNotAuthorized(
  context: GuardContext,
  ticket: Ticket,
  connection: string,
): Promise<string | undefined> {
  try {
    const db = await context.openDb();
    const guards = await executionGuards(db);
    if (guards.ledger) await assertNotInLedger(db, ticket.id);
    const inForce = await authorizeAtClaim(db, { ...context.settings, connection });
    return (authorizeExecution(undefined, guards.signed)(ticket) ?? inForce(ticket))?.message;
  } catch (error) {
    return toAgentError(error).message;
  }
}

/** 55P03 before the approved heavy statement runs: another session holds or awaits a lock it needs (SPEC §5 6). */
export function lockedOut(ticketId: string, holders: readonly LockHolder[]): ErrorFields {
  const who = holders
    .slice(0, 3)
    .map(
      (h) =>
        `pid ${h.pid ?? 'prepared transaction'} (${h.user ?? '?'}, ${h.state ?? '?'}${h.transactionSeconds !== null ? ` for ${h.transactionSeconds} s` : ''}) ${h.granted ? 'holds' : 'awaits'} ${h.mode} on ${h.table}${h.query ? `: ${h.query}` : ''}`,
    )
    .join('; ');
  return {
    code: '55P03',
    message: `could not obtain lock: the statement approved on ticket ${ticketId} did not run, another session is in the way (${who}); the transaction was rolled back, nothing kept, no lock queued`,
    hint: 'Run the transaction again later (with backoff), or end that session first: the approval stays until a retry commits.',
  };
}

/** The ticket's note for heavy statement N: analysed, not executed; the transaction not measured from N on. */
export function heavyHeldNote(index: number, why: string, lockWaitMs: number): string {
  return (
    `Statement ${index + 1} is heavy DDL, analysed, not executed (SPEC §5 4a): ${why}. The transaction was rolled back there and is not measured from statement ${index + 1} on. ` +
    `Approved, the client's retry runs statements 1..${index + 1} for real, statement ${index + 1} only after checking that no other session holds or awaits a lock it needs, and waiting at most ${lockWaitMs} ms for its lock (the client gets 55P03 and retries; SPEC §5 6); it holds that lock until the COMMIT. ` +
    `If the transaction goes on past statement ${index + 1}, its COMMIT is held once more on a new ticket for the whole transaction (rolled back: the heavy work of that retry is approved work, wasted but harmless, and costs its duration again on the final retry).`
  );
}

/** The ticket's note for an approved heavy statement that ran in the measured retry. */
export function heavyRanNote(index: number, ticketId: string, sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  return `Statement ${index + 1} (${text.length > 160 ? `${text.slice(0, 157)}…` : text}) is heavy DDL approved on ticket ${ticketId}: it ran for real in this measured run (its effects are in the rows above) and was rolled back with it; approved, the retry runs it again under the same lock check and lock_timeout.`;
}

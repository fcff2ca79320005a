/**
 * A measured client transaction at its COMMIT (guardedTransaction.ts measured it): the newest approved ticket of
 * its templates whose values (valueComparison.ts) and effects (effectBounds.ts) it matches is claimed and the
 * transaction commits once (commitApproved.ts); otherwise it is rolled back and held (holdTransaction.ts) on the
 * pending ticket of the same statements and values, or on a new one that says what varies on retry and what
 * differs from the approved ticket of these templates. Heavy DDL held at its statement is held here too.
 */
import { transactionSql } from '../../core/approvals/ticket';
import type { GuardTransactionStatement, Ticket } from '../../core/approvals/ticket';
import type { ChangedTable } from '../../core/sql/tableEffects';
import type { GuardContext } from '../guardContext';
import { refusedError } from '../hold/heldMessages';
import { oneAtATime } from '../hold/keyedQueue';
import type { ErrorFields } from '../wire/backendMessages';
import type { ApprovedRetry } from './commitApproved';
import { commitApproved } from './commitApproved';
import { ddlStatementsOf, exceededBounds } from './effectBounds';
import type { CommitAnswer } from './holdTransaction';
import { holdOnTicket } from './holdTransaction';
import { keyColumnsOf } from './keyColumns';
import type { ReturnedRows } from './resultCapture';
import { statementValues } from './statementValues';
import type { RecordedStatement } from './transactionRecord';
import { templateKeyOf } from './transactionRecord';
import { hashedBounds, heldTransaction, liveTransactionTickets } from './transactionTickets';
import { compareValues, differenceLines } from './valueComparison';
import { markVarying } from './varyingValues';
import { rowDifferences, touchedRows } from './touchedRows';

/** What the guarded transaction gives its COMMIT: its session, its user, and how it ends. */
export interface TransactionPort extends ApprovedRetry {
  context: GuardContext;
  events: { held(ticketId: string): void } | undefined;
}

/** The measured run, read at its COMMIT. */
export interface MeasuredRun {
  changed: ChangedTable[];
  writes: RecordedStatement[];
  /** The key of its statements' templates (transactionRecord.ts). */
  key: string;
  ddlNotes: string[];
  /** What the server returned to each recorded statement (resultCapture.ts). */
  returned: ReadonlyMap<number, ReturnedRows>;
}

export async function commitOrHoldRun(port: TransactionPort, run: MeasuredRun): Promise<CommitAnswer> {
  const { context } = port;
  const { changed, writes, key, returned } = run;
  const ddl = writes.filter((s) => !s.read).flatMap((s) => ddlStatementsOf(s.sql));
  const store = await context.openTicketStore();
  const connection = await context.connectionKey();
  const rule = { volatile: context.settings.guardVolatileValues !== false, now: Date.now() };
  const retry = writes.map((s) => ({ sql: s.sql, values: memo(() => statementValues(s.sql)) }));
  // Looked up first: concurrent retries of one approved ticket all find it, and the claim decides between them.
  const approvedOnes = (await liveTransactionTickets(store, connection, key)).filter((t) => t.status === 'APPROVED');
  const db = await context.openDb();
  // Which rows that existed before it this transaction updated, deleted or locked (row identity, touchedRows.ts).
  const xid = (await port.inBand.run('SELECT pg_current_xact_id()::xid::text')).rows[0]?.[0];
  const rows = xid ? await touchedRows(db, changed, xid) : [];
  const ofValues = (t: Ticket) => [
    ...differenceLines(compareValues(t.transaction?.statements ?? [], retry, returned, rule)),
    ...rowDifferences(t.transaction?.rows, rows),
  ];
  // This transaction is an approved ticket of these templates only if its values are that ticket's too.
  let differs: string[] = [];
  let exceeded: string[] = [];
  for (const candidate of approvedOnes) {
    const differences = ofValues(candidate);
    const over = exceededBounds(
      { changed, ddl },
      hashedBounds(candidate),
      ddlStatementsOf(candidate.sql),
      context.settings.tolerance,
    );
    if (differences.length === 0 && over.length === 0) return commitApproved(port, candidate, connection);
    // What the held-again card says differs: from the newest approved ticket of these templates.
    if (candidate === approvedOnes[0]) {
      differs = differences;
      exceeded = over;
    }
  }
  const varies: GuardTransactionStatement['varies'][] = await markVarying(
    retry.map((r) => r.values()),
    returned,
    rule,
    (table) => keyColumnsOf(db, table),
  );
  await port.rollback();
  // Rolled back, so no lock is held upstream: identical transactions from concurrent clients are decided in
  // turn from here (the first holds, the others find its ticket).
  return oneAtATime(`transaction ${key}`, async () => {
    const pending = (await liveTransactionTickets(store, connection, key)).find(
      (t) => t.status === 'PENDING_APPROVAL' && ofValues(t).length === 0,
    );
    if (pending && exceeded.length === 0 && differs.length === 0) {
      port.events?.held(pending.id);
      return { kind: 'error', fields: heldTransaction(pending, true) };
    }
    return holdOnTicket(context, port.user, port.events, {
      connection,
      writes,
      varies,
      changed,
      exceeded,
      differs,
      approved: approvedOnes[0],
      ddlNotes: run.ddlNotes,
      rows,
    });
  });
}

/** Statements 1..N, N heavy and not run, held on one ticket (the same one while it is pending). */
export async function holdHeavyRun(
  port: TransactionPort,
  hold: { writes: RecordedStatement[]; changed: ChangedTable[]; notes: string[] },
): Promise<ErrorFields> {
  const key = templateKeyOf(hold.writes);
  const connection = await port.context.connectionKey();
  const store = await port.context.openTicketStore();
  return oneAtATime(`transaction ${key}`, async () => {
    const pending = (await liveTransactionTickets(store, connection, key)).find(
      (t) => t.status === 'PENDING_APPROVAL' && t.sql === transactionSql(hold.writes),
    );
    if (pending) {
      port.events?.held(pending.id);
      return heldTransaction(pending, true, hold.writes.length);
    }
    const answer = await holdOnTicket(port.context, port.user, port.events, {
      connection,
      writes: hold.writes,
      varies: [],
      changed: hold.changed,
      exceeded: [],
      differs: [],
      approved: undefined,
      ddlNotes: hold.notes,
      heavyAt: hold.writes.length,
    });
    return answer.kind === 'error' ? answer.fields : refusedError('not run');
  });
}

/** A function's value, computed on first use. */
function memo<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

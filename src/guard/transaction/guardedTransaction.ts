/**
 * A client transaction approved as a whole (issue 24 P4; the rule is in README, guard section). At the first
 * statement that is not a read, the client's own upstream transaction becomes read-write (`SET TRANSACTION
 * READ WRITE`, which PostgreSQL accepts only before the transaction's first query took a snapshot; otherwise
 * the guard keeps its old answer: ROLLBACK, PA002) and the guard records every statement from then on. The
 * statements run for real, so the client gets real RETURNING ids and sequence values. At the client's COMMIT:
 * - no approved ticket has this transaction's templates: the guard reads the effects (pg_stat_xact_user_tables),
 *   ROLLS BACK (no lock outlives it while a person decides) and answers PA001 naming ONE ticket for the whole
 *   transaction (its statements with their values, in order; the measured rows per table);
 * - an approved one has them: the effects must stay within the approved ones (effectBounds.ts); then the ticket
 *   is claimed with this transaction's xid (as core/sql/executeApproved.ts claims) and the guard COMMITs, once.
 * Not built: databases with the execution ledger or a signed policy (their ledger row must be written inside
 * the client's transaction): such a COMMIT is rolled back and refused (PA002).
 */
import { GUARD_TRANSACTION_HEADER } from '../../core/approvals/ticket';
import type { Ticket } from '../../core/approvals/ticket';
import { authorizeAtClaim } from '../../core/approvals/policyInForce';
import { executionGuards } from '../../core/approvals/signedMode';
import { toAgentError } from '../../core/platform/errors';
import { classifySql } from '../../core/sql/classify';
import { analyzeImpact } from '../../core/sql/impact';
import { loadParser, parseSql } from '../../core/sql/parse';
import type { ChangedTable, StatSnapshot } from '../../core/sql/tableEffects';
import { diffStats } from '../../core/sql/tableEffects';
import type { GuardContext } from '../guardContext';
import { failedError, heldError, NOT_WHOLE, refusedError, WHOLE_HINT } from '../heldMessages';
import { statementCount, transactionControlOf } from '../transactionControl';
import { commandComplete, errorResponse, readyForQuery } from '../wire/backendMessages';
import type { ErrorFields } from '../wire/backendMessages';
import { exceededBounds } from './effectBounds';
import { recordStatement, TransactionRecord } from './transactionRecord';

/** A simple query run in the client's own upstream session, its answer kept from the client. */
export interface InBand {
  run(sql: string): Promise<{ rows: (string | null)[][]; error?: string }>;
}

export type CommitAnswer = { kind: 'committed' } | { kind: 'error'; fields: ErrorFields };

const HEADER = GUARD_TRANSACTION_HEADER;
const DML = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'SelectStmt']);

export class GuardedTransaction {
  private readonly record = new TransactionRecord();
  private active = false;
  /** The session's counters when measuring began: PostgreSQL 15 shows a session's unflushed counts of earlier transactions too. */
  private baseline: StatSnapshot = new Map();

  constructor(
    private readonly context: GuardContext,
    private readonly inBand: InBand,
    private readonly user: string,
  ) {}

  /** The client's transaction is recorded and measured (its upstream transaction is read-write). */
  get measuring(): boolean {
    return this.active;
  }

  /** Makes the client's upstream transaction read-write; false when PostgreSQL refuses (a query ran already). */
  async enter(): Promise<boolean> {
    if (this.active) return true;
    const answer = await this.inBand.run('SET TRANSACTION READ WRITE');
    if (answer.error !== undefined) return false;
    this.baseline = await this.counters();
    this.active = true;
    this.record.clear();
    return true;
  }

  async add(sql: string, read: boolean, templateText?: string): Promise<void> {
    this.record.add(await recordStatement(sql, read, templateText));
  }

  /** The data the last recorded statement (a COPY … FROM STDIN) read: shown before it, its hash part of its template. */
  addCopyData(comment: string, sha256: string): void {
    if (this.active) this.record.amendLast((s) => ({ ...s, sql: `${comment}\n${s.sql}`, template: `${s.template}:${sha256}` }));
  }

  /** The transaction ended upstream (ReadyForQuery 'I'): the next one starts read-only and unrecorded. */
  reset(): void {
    this.active = false;
    this.record.clear();
  }

  /** Rolls back (the guard's own refusal while measuring): nothing the transaction did is kept. */
  async rollback(): Promise<void> {
    await this.inBand.run('ROLLBACK');
    this.reset();
  }

  /**
   * Transaction control while measuring (`upstreamAborted`: a statement of the client failed there): ROLLBACK,
   * or COMMIT of an aborted transaction, goes upstream as sent; COMMIT alone is the guard's; anything else
   * (SAVEPOINT, AND CHAIN, COMMIT among other statements) is rolled back and refused.
   */
  async end(sql: string, upstreamAborted: boolean): Promise<{ kind: 'forward' } | { kind: 'answer'; bytes: Buffer; aborted: boolean }> {
    const control = await transactionControlOf(sql);
    const alone = control.length === 1 && (await statementCount(sql)) === 1;
    if (alone && (control[0] === 'rollback' || (control[0] === 'commit' && upstreamAborted))) return { kind: 'forward' };
    if (alone && control[0] === 'commit') {
      const answer = await this.commit();
      return { kind: 'answer', aborted: false, bytes: Buffer.concat([answer.kind === 'committed' ? commandComplete('COMMIT') : errorResponse(answer.fields), readyForQuery('I')]) };
    }
    await this.rollback();
    return { kind: 'answer', aborted: true, bytes: Buffer.concat([errorResponse(refusedError(`${NOT_WHOLE}; the transaction was rolled back`, WHOLE_HINT)), readyForQuery('E')]) };
  }

  /** The client's COMMIT: held on one ticket (rolled back) or, approved and within bounds, committed once. */
  async commit(): Promise<CommitAnswer> {
    try {
      return await this.commitOrHold();
    } catch (error) {
      if (this.active) await this.rollback().catch(() => undefined);
      this.context.logger.warn('guard could not hold or commit a transaction', { error: String(error) });
      return { kind: 'error', fields: failedError(error) };
    }
  }

  private async commitOrHold(): Promise<CommitAnswer> {
    const changed = await this.measure();
    const writes = [...this.record.statements];
    const key = this.record.templateKey();
    const ddl = writes.filter((s) => !s.read).flatMap((s) => parseSql(s.sql).statements.map((p) => p.kind).filter((k) => !DML.has(k)));
    const store = await this.context.openTicketStore();
    const connection = await this.context.connectionKey();
    const same = (await store.list()).filter((t) => t.kind === 'write' && t.connection === connection && t.sql.startsWith(`${HEADER}${key}\n`));
    const approved = same.find((t) => t.status === 'APPROVED');
    const db = await this.context.openDb();
    let exceeded: string[] = [];
    if (approved) {
      const guards = await executionGuards(db);
      if (guards.ledger || guards.signed) {
        await this.rollback();
        return { kind: 'error', fields: refusedError(`ticket ${approved.id} is approved, but this database keeps an execution ledger (or a signed policy), which a transaction through the guard cannot write yet; rolled back, nothing kept`, `Run the statements with: pg-agent exec ${approved.id} is NOT equivalent (values differ); run the transaction directly against the database instead.`) };
      }
      exceeded = exceededBounds({ changed, ddl }, approved, approvedDdl(approved), this.context.settings.tolerance);
      if (exceeded.length === 0) return this.commitApproved(approved, connection);
    }
    await this.rollback();
    const pending = same.find((t) => t.status === 'PENDING_APPROVAL');
    if (pending && exceeded.length === 0) return { kind: 'error', fields: heldTransaction(pending, true) };
    const body = writes.map((s) => `${s.sql.trim().replace(/;\s*$/, '')};`).join('\n');
    const impact = await analyzeImpact(db, classifySql(body), this.context.settings);
    // The rows per table are what the client's own run changed (the preview replays recorded values).
    impact.tables = changed.map((c) => ({ schema: c.schema, name: c.name, via: 'direct', inserted: c.inserted, updated: c.updated, deleted: c.deleted }));
    impact.warnings.push('A transaction through the guard: it commits only as the client\'s retry with the same statement templates, within these rows per table; sequence values its measured run took are gone.');
    const ticket = await store.create({ sql: `${HEADER}${key}\n${body}`, connection, impact, createdBy: `guard user ${this.user}` });
    this.context.logger.info('guard held a transaction', { ticket: ticket.id, statements: writes.length, exceeded: exceeded.join('; ') });
    const fields = heldTransaction(ticket, false);
    if (exceeded.length > 0) fields.message += `; the approved ticket ${approved!.id} did not cover it (${exceeded.join('; ')})`;
    return { kind: 'error', fields };
  }

  private async commitApproved(approved: Ticket, connection: string): Promise<CommitAnswer> {
    const db = await this.context.openDb();
    const xid = (await this.inBand.run('SELECT pg_current_xact_id()::text')).rows[0]?.[0];
    if (!xid) throw new Error('PostgreSQL did not give the transaction an id.');
    const by = `${this.context.executedBy} for guard user ${this.user}`;
    const authorize = await authorizeAtClaim(db, { ...this.context.settings, connection });
    let ticket: Ticket;
    try {
      ticket = await store(this.context).then((s) => s.claim(approved.id, { connection, xid, by, authorize }));
    } catch (error) {
      await this.rollback();
      return { kind: 'error', fields: refusedError(`ticket ${approved.id} could not be claimed; rolled back, nothing kept: ${toAgentError(error).message}`) };
    }
    const committed = await this.inBand.run('COMMIT');
    this.reset();
    const s = await store(this.context);
    if (committed.error !== undefined) {
      // Settled from pg_xact_status() by the store when the answer is unclear; here the server said no.
      await s.finish(ticket.id, { ok: false, by, xid, comment: committed.error }).catch(() => undefined);
      return { kind: 'error', fields: { code: '40000', message: committed.error } };
    }
    await s.finish(ticket.id, { ok: true, by, xid, comment: 'committed by the client\'s transaction through the guard' }).catch((error: unknown) =>
      this.context.logger.error('a guarded transaction committed but its ticket could not be marked executed', { ticket: ticket.id, error: String(error) }),
    );
    this.context.logger.info('guard committed an approved transaction', { ticket: ticket.id, xid });
    return { kind: 'committed' };
  }

  /** Rows per table this transaction changed since it became read-write (cascades and triggers included). */
  private async measure(): Promise<ChangedTable[]> {
    await loadParser();
    return diffStats(this.baseline, await this.counters());
  }

  private async counters(): Promise<StatSnapshot> {
    const answer = await this.inBand.run(
      'SELECT relid::int8, schemaname, relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_xact_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0',
    );
    if (answer.error !== undefined) throw new Error(answer.error);
    return new Map(answer.rows.map(([relid, schema, name, ins, upd, del]) => [Number(relid), { schema: schema ?? '', name: name ?? '', inserted: Number(ins), updated: Number(upd), deleted: Number(del) }]));
  }
}

const store = (context: GuardContext) => context.openTicketStore();

function approvedDdl(ticket: Ticket): string[] {
  return parseSql(ticket.sql).statements.map((p) => p.kind).filter((k) => !DML.has(k));
}

/** PA001 for a whole transaction: approved, the client's same transaction (its values may differ) commits once. */
function heldTransaction(ticket: Ticket, reused: boolean): ErrorFields {
  return {
    ...heldError(ticket, reused),
    hint: `A person approves it with: pg-agent approvals approve ${ticket.id} (or in VS Code, "Waiting for you"). Then run the same transaction again (same statements; values may differ): it commits once, within the approved rows per table.`,
  };
}

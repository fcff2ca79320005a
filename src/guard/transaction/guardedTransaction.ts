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
 * With the execution ledger or a signed policy, the claim checks what executeApproved checks and the ledger row
 * is written in the client's transaction before its COMMIT (ledgerInTransaction.ts).
 * DDL runs while measuring only when it is cheap (ddlInTransaction.ts, SPEC §5 4a); the approved retry must
 * carry the identical DDL text (effectBounds.ts), not only its template. Heavy DDL holds the transaction at
 * that statement on a ticket, and runs only in a retry that ticket (or a longer one) approves (heavyDdl.ts).
 */
import type { Classification } from '../../core/sql/classification';
import type { LockHolder } from '../../core/sql/ddl/lockHolders';
import { loadParser } from '../../core/sql/parse';
import { setsPassword } from '../../core/sql/secrets/hidePasswords';
import type { ChangedTable, StatSnapshot } from '../../core/sql/tableEffects';
import { diffStats } from '../../core/sql/tableEffects';
import type { GuardContext } from '../guardContext';
import { failedError, NOT_WHOLE, refusedError, WHOLE_HINT } from '../hold/heldMessages';
import { statementCount, transactionControlOf } from '../judge/transactionControl';
import { commandComplete, errorResponse, readyForQuery } from '../wire/backendMessages';
import type { ErrorFields } from '../wire/backendMessages';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { GUARD_WORK_SQL, heavyBudgetSql, judgeDdlInTransaction, lockBudgetSql, lockWaitMs } from './ddlInTransaction';
import { ddlStatementsOf, isDml } from './effectBounds';
import { approvedPrefix, heavyHeldNote, heavyRanNote, lockedOut, spendHeavyRun, whyNotAuthorized } from './heavyDdl';
import type { CommitAnswer } from './holdTransaction';
import { ResultCapture } from './resultCapture';
import type { RecordedStatement } from './transactionRecord';
import { recordStatement, templateKeyOf, TransactionRecord } from './transactionRecord';
import { liveTransactionTickets } from './transactionTickets';
import type { MeasuredRun, TransactionPort } from './transactionCommit';
import { commitOrHoldRun, holdHeavyRun } from './transactionCommit';

export type { CommitAnswer } from './holdTransaction';

/** A simple query run in the client's own upstream session, its answer kept from the client. */
export interface InBand {
  run(sql: string): Promise<{ rows: (string | null)[][]; error?: string; code?: string }>;
}

const PASSWORD_IN_TRANSACTION =
  "not run inside the transaction: it sets a role's password, which the transaction's ticket would keep in clear; the transaction was rolled back, nothing kept";
const PASSWORD_IN_TRANSACTION_HINT =
  'Send the ALTER ROLE … PASSWORD alone, outside BEGIN … COMMIT: the guard holds it for approval and keeps the password only as its SCRAM-SHA-256 verifier.';
const DDL_NOT_RUN_HINT =
  'Run that statement on its own (outside BEGIN … COMMIT) through the guard: it is held on a ticket with its analysis and, once approved, runs once through the executor (SPEC §5 6); then run the transaction without it. Heavy DDL sent as a simple query (no parameters) is held with the transaction instead.';

export class GuardedTransaction {
  private readonly record = new TransactionRecord();
  /** What the server returned to each recorded statement (the source of values that vary as "returned"). */
  private readonly capture = new ResultCapture();
  private active = false;
  /** The session's counters when measuring began: PostgreSQL 15 shows a session's unflushed counts of earlier transactions too. */
  private baseline: StatSnapshot = new Map();
  /** DDL texts admitted in this transaction (a prepared statement is admitted at Parse, run at Bind). */
  private readonly admitted = new Set<string>();
  /** Each DDL statement run while measuring, with its 4a analysis, for the ticket. */
  private readonly ddlNotes: string[] = [];
  /** Why the last statement was not measured (taken by the client session's refusal). */
  private refusal: ErrorFields | undefined;
  /** Heavy DDL met while measuring: held on a ticket once the client session rolled back (takeRefusal). */
  private heavyHold: { writes: RecordedStatement[]; changed: ChangedTable[]; notes: string[] } | undefined;
  /** Approved heavy DDL admitted in this transaction (its texts, the index of its statement), recorded as such. */
  private readonly heavyAt = new Map<string, number>();
  /** Approved heavy DDL runs with the statement budget lifted: set again after it (ran(), or the next admit). */
  private rebudget = false;
  private upstreamPid: number | undefined;

  constructor(
    private readonly context: GuardContext,
    private readonly inBand: InBand,
    private readonly user: string,
    /** Told of each ticket a transaction is held on (the guard's status; VS Code reads the proposal file). */
    private readonly events?: { held(ticketId: string): void },
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
    this.refusal = undefined;
    this.active = true;
    this.record.clear();
    this.capture.clear();
    return true;
  }

  /**
   * A statement that is not a read, while measuring: true when it may run for real. DDL only when cheap
   * (ddlInTransaction.ts), after its lock_timeout is set in-band (so never inside a pipelined batch).
   */
  async admit(classification: Classification, inBatch: boolean, simple = false): Promise<boolean> {
    this.refusal = undefined;
    if (setsPassword(classification.statements)) {
      // The transaction's ticket would keep it in clear: alone, the guard keeps it as its verifier (heldPasswords.ts).
      this.refusal = refusedError(PASSWORD_IN_TRANSACTION, PASSWORD_IN_TRANSACTION_HINT);
      return false;
    }
    const notRun = (why: string): false => {
      this.refusal = refusedError(
        `not run inside the transaction: the guard measures only what a ROLLBACK undoes, and DDL only when it is cheap (SPEC §5 4a): ${why}; analysed, not executed; the transaction was rolled back, nothing kept`,
        DDL_NOT_RUN_HINT,
      );
      return false;
    };
    if (this.rebudget) {
      // After approved heavy DDL (its statement budget lifted for it): each later statement at most 250 ms again.
      if (inBatch)
        return notRun('a statement sent inside a pipelined batch after heavy DDL (send it with its own Sync)');
      const set = await this.inBand.run(lockBudgetSql(this.context.settings, true));
      if (set.error !== undefined) return notRun(`its statement_timeout could not be set (${set.error})`);
      this.rebudget = false;
    }
    const verdict = await judgeDdlInTransaction(
      await this.context.openDb(),
      classification.statements,
      this.context.settings,
    );
    if (!verdict.run && !verdict.heavy) return notRun(verdict.why);
    const ddl = classification.statements.filter((s) => !isDml(s.kind));
    if (ddl.length === 0) return true;
    if (inBatch)
      return notRun('DDL sent inside a pipelined batch of the extended protocol (send it with its own Sync)');
    // A simple query alone: the guard sets the statement budget again right after it (ran()), before a COPY's data.
    if (!verdict.run && (!simple || classification.statements.some((s) => s.kind === 'CopyStmt')))
      return notRun(
        `${verdict.why}; heavy DDL is held and runs approved only when sent as a simple query (without parameters or COPY), not through Parse/Bind (JDBC, e.g. Flyway or Liquibase: add preferQueryMode=simple to the URL)`,
      );
    if (!verdict.run) return this.admitHeavy(classification, verdict.why, verdict.heavy?.holders ?? []);
    const set = await this.inBand.run(lockBudgetSql(this.context.settings, verdict.blocking));
    if (set.error !== undefined) return notRun(`its lock_timeout could not be set (${set.error})`);
    this.ddlNotes.push(...verdict.notes);
    for (const s of ddl) this.admitted.add(s.sql);
    return true;
  }

  /**
   * Heavy DDL while measuring: it runs (true) only as statement N of a retry an approved ticket covers so far
   * (heavyDdl.ts), its policy allows it now, no other session holds or awaits a lock it needs, and under a short
   * lock_timeout. Otherwise false: the client session rolls back, and takeRefusal holds 1..N on a ticket (or
   * answers 55P03, or PA002 when the ticket may not run).
   */
  private async admitHeavy(
    classification: Classification,
    why: string,
    holders: readonly LockHolder[],
  ): Promise<boolean> {
    const sql = classification.statements.map((s) => s.sql.trim().replace(/;\s*$/, '')).join(';\n');
    const index = this.record.statements.length;
    const next = await recordStatement(sql, false, sql, true);
    const changed = await this.measure();
    const ddl = [...this.record.writes.flatMap((s) => ddlStatementsOf(s.sql)), ...ddlStatementsOf(sql)];
    const connection = await this.context.connectionKey();
    // The ticket held at this heavy statement: found by the templates of statements 1..N (transactionTickets.ts).
    const tickets = await liveTransactionTickets(
      await this.context.openTicketStore(),
      connection,
      templateKeyOf([...this.record.statements, next]),
    );
    const ticket = approvedPrefix(
      tickets,
      connection,
      this.record.statements,
      next,
      { changed, ddl },
      this.context.settings.tolerance,
    );
    if (!ticket) {
      this.heavyHold = {
        writes: [...this.record.statements, next],
        changed,
        notes: [...this.ddlNotes, heavyHeldNote(index, why, lockWaitMs(this.context.settings))],
      };
      return false;
    }
    const stop = (fields: ErrorFields): false => ((this.refusal = fields), false);
    const denied = await whyNotAuthorized(this.context, ticket, connection);
    if (denied !== undefined)
      return stop(
        refusedError(
          `not run: ticket ${ticket.id} approves this heavy statement, but may not run now: ${denied}; the transaction was rolled back, nothing kept`,
        ),
      );
    // The analysis read pg_locks from the guard's own session: the client's own transaction's locks are not in the way.
    this.upstreamPid ??= Number((await this.inBand.run('SELECT pg_backend_pid()')).rows[0]?.[0]);
    const others = holders.filter((h) => h.pid !== this.upstreamPid);
    if (others.length > 0) return stop(lockedOut(ticket.id, others));
    const set = await this.inBand.run(heavyBudgetSql(this.context.settings));
    if (set.error !== undefined)
      return stop(
        refusedError(
          `not run: the lock_timeout of the heavy statement approved on ticket ${ticket.id} could not be set (${set.error}); the transaction was rolled back, nothing kept`,
        ),
      );
    this.rebudget = true;
    spendHeavyRun(ticket.id, index);
    this.ddlNotes.push(heavyRanNote(index, ticket.id, sql));
    // Never in `admitted`: heavy DDL runs only as this simple query, never as a prepared statement bound later.
    for (const text of ddlStatementsOf(sql)) this.heavyAt.set(text, index);
    this.context.logger.info('guard runs approved heavy DDL in a client transaction', {
      ticket: ticket.id,
      statement: index + 1,
    });
    return true;
  }

  /** After a simple query that ran: approved heavy DDL in it had no statement budget, which is set again now. */
  async ran(): Promise<void> {
    if (!this.rebudget) return;
    const set = await this.inBand.run(lockBudgetSql(this.context.settings, true));
    // Failed: the heavy statement failed and the transaction is aborted (nothing more runs in it).
    if (set.error === undefined) this.rebudget = false;
  }

  /** Was this DDL text admitted (its lock_timeout set) earlier in this transaction? */
  admittedDdl(classification: Classification): boolean {
    return classification.statements.every((s) => isDml(s.kind) || this.admitted.has(s.sql));
  }

  /**
   * Why the last statement was not measured, once; called after the client session rolled the transaction
   * back upstream. Heavy DDL is held on a ticket here, so no lock of the client is held while it is made.
   */
  async takeRefusal(): Promise<ErrorFields | undefined> {
    const refusal = this.refusal;
    const hold = this.heavyHold;
    this.refusal = undefined;
    this.heavyHold = undefined;
    if (!hold) return refusal;
    try {
      if (this.active) await this.rollback();
      return await holdHeavyRun(this.port(), hold);
    } catch (error) {
      this.context.logger.warn('guard could not hold a transaction with heavy DDL', { error: String(error) });
      return failedError(error);
    }
  }

  /** Records a statement; its index, which its answer's rows are expected by (expectResult). */
  async add(sql: string, read: boolean, templateText?: string): Promise<number> {
    const at = this.record.statements.length;
    await loadParser();
    const heavy = !read && this.heavyAt.size > 0 && ddlStatementsOf(sql).some((text) => this.heavyAt.get(text) === at);
    this.record.add(await recordStatement(sql, read, templateText, heavy));
    return at;
  }

  /**
   * While measuring, a request whose answer may carry rows went upstream (a simple query, an Execute): the
   * recorded statement's index, or undefined for one not recorded (a read passed on). Call before sending it.
   */
  expectResult(statement: number | undefined, kind: 'query' | 'execute'): void {
    if (this.active) this.capture.expect(statement, kind);
  }

  /** Every upstream message batch (the client session's upstream hook). */
  /** The transaction is measured: what the server returns is recorded (its messages must be decoded). */
  get observing(): boolean {
    return this.active;
  }

  observe(messages: readonly BackendMessage[]): void {
    if (this.active) this.capture.observe(messages);
  }

  /** The data the last recorded statement (a COPY … FROM STDIN) read: shown before it, its hash part of its template. */
  addCopyData(comment: string, sha256: string): void {
    if (this.active)
      this.record.amendLast((s) => ({ ...s, sql: `${comment}\n${s.sql}`, template: `${s.template}:${sha256}` }));
  }

  /** The transaction ended upstream (ReadyForQuery 'I'): the next one starts read-only and unrecorded. */
  reset(): void {
    this.active = false;
    this.record.clear();
    this.capture.clear();
    this.admitted.clear();
    this.heavyAt.clear();
    this.rebudget = false;
    this.ddlNotes.length = 0;
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
  async end(
    sql: string,
    upstreamAborted: boolean,
  ): Promise<{ kind: 'forward' } | { kind: 'answer'; bytes: Buffer; aborted: boolean }> {
    const control = await transactionControlOf(sql);
    const alone = control.length === 1 && (await statementCount(sql)) === 1;
    if (alone && (control[0] === 'rollback' || (control[0] === 'commit' && upstreamAborted)))
      return { kind: 'forward' };
    if (alone && control[0] === 'commit') {
      const answer = await this.commit();
      return {
        kind: 'answer',
        aborted: false,
        bytes: Buffer.concat([
          answer.kind === 'committed' ? commandComplete('COMMIT') : errorResponse(answer.fields),
          readyForQuery('I'),
        ]),
      };
    }
    await this.rollback();
    return {
      kind: 'answer',
      aborted: true,
      bytes: Buffer.concat([
        errorResponse(refusedError(`${NOT_WHOLE}; the transaction was rolled back`, WHOLE_HINT)),
        readyForQuery('E'),
      ]),
    };
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
    await this.inBand.run(GUARD_WORK_SQL);
    const measured: MeasuredRun = {
      changed: await this.measure(),
      writes: [...this.record.statements],
      key: this.record.templateKey(),
      ddlNotes: [...this.ddlNotes],
      returned: new Map(this.capture.all),
    };
    return commitOrHoldRun(this.port(), measured);
  }

  private port(): TransactionPort {
    return {
      context: this.context,
      inBand: this.inBand,
      user: this.user,
      events: this.events,
      rollback: () => this.rollback(),
      ended: () => this.reset(),
    };
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
    return new Map(
      answer.rows.map(([relid, schema, name, ins, upd, del]) => [
        Number(relid),
        { schema: schema ?? '', name: name ?? '', inserted: Number(ins), updated: Number(upd), deleted: Number(del) },
      ]),
    );
  }
}

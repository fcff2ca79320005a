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
import { isGuardTransaction, transactionSql } from '../../core/approvals/ticket';
import type { Ticket } from '../../core/approvals/ticket';
import { LedgerRefusal } from '../../core/approvals/executionLedger';
import { writeProposal } from '../../core/approvals/proposalFiles';
import type { Classification } from '../../core/sql/classification';
import { toAgentError } from '../../core/platform/errors';
import { classifySql } from '../../core/sql/classify';
import { analyzeImpact } from '../../core/sql/impact';
import { riskOfWrite } from '../../core/sql/risk';
import { loadParser } from '../../core/sql/parse';
import type { ChangedTable, StatSnapshot } from '../../core/sql/tableEffects';
import { diffStats } from '../../core/sql/tableEffects';
import type { GuardContext } from '../guardContext';
import { oneAtATime } from '../keyedQueue';
import { failedError, heldError, NOT_WHOLE, refusedError, WHOLE_HINT } from '../heldMessages';
import { statementCount, transactionControlOf } from '../transactionControl';
import { commandComplete, errorResponse, readyForQuery } from '../wire/backendMessages';
import type { ErrorFields } from '../wire/backendMessages';
import type { LockHolder } from '../../core/sql/ddl/lockHolders';
import { GUARD_WORK_SQL, heavyBudgetSql, judgeDdlInTransaction, lockBudgetSql, lockWaitMs } from './ddlInTransaction';
import { ddlStatementsOf, exceededBounds, isDml } from './effectBounds';
import { approvedPrefix, heavyHeldNote, heavyRanNote, lockedOut, spendHeavyRun, whyNotAuthorized } from './heavyDdl';
import { claimInClientTransaction } from './ledgerInTransaction';
import type { RecordedStatement } from './transactionRecord';
import { recordStatement, templateKeyOf, TransactionRecord } from './transactionRecord';

/** A simple query run in the client's own upstream session, its answer kept from the client. */
export interface InBand {
  run(sql: string): Promise<{ rows: (string | null)[][]; error?: string; code?: string }>;
}

export type CommitAnswer = { kind: 'committed' } | { kind: 'error'; fields: ErrorFields };

const DDL_NOT_RUN_HINT =
  'Run that statement on its own (outside BEGIN … COMMIT) through the guard: it is held on a ticket with its analysis and, once approved, runs once through the executor (SPEC §5 6); then run the transaction without it. Heavy DDL sent as a simple query (no parameters) is held with the transaction instead.';

export class GuardedTransaction {
  private readonly record = new TransactionRecord();
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
    return true;
  }

  /**
   * A statement that is not a read, while measuring: true when it may run for real. DDL only when cheap
   * (ddlInTransaction.ts), after its lock_timeout is set in-band (so never inside a pipelined batch).
   */
  async admit(classification: Classification, inBatch: boolean, simple = false): Promise<boolean> {
    this.refusal = undefined;
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
    const tickets = await (await this.context.openTicketStore()).list();
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
      return await this.holdHeavy(hold);
    } catch (error) {
      this.context.logger.warn('guard could not hold a transaction with heavy DDL', { error: String(error) });
      return failedError(error);
    }
  }

  async add(sql: string, read: boolean, templateText?: string): Promise<void> {
    const at = this.record.statements.length;
    await loadParser();
    const heavy = !read && this.heavyAt.size > 0 && ddlStatementsOf(sql).some((text) => this.heavyAt.get(text) === at);
    this.record.add(await recordStatement(sql, read, templateText, heavy));
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
    const changed = await this.measure();
    const writes = [...this.record.statements];
    const key = this.record.templateKey();
    const ddl = writes.filter((s) => !s.read).flatMap((s) => ddlStatementsOf(s.sql));
    const ddlNotes = [...this.ddlNotes];
    const store = await this.context.openTicketStore();
    const connection = await this.context.connectionKey();
    const same = (await store.list()).filter((t) => sameTransaction(t, connection, key));
    const approved = same.find((t) => t.status === 'APPROVED');
    let exceeded: string[] = [];
    if (approved) {
      exceeded = exceededBounds(
        { changed, ddl },
        hashedBounds(approved),
        ddlStatementsOf(approved.sql),
        this.context.settings.tolerance,
      );
      if (exceeded.length === 0) return this.commitApproved(approved, connection);
    }
    await this.rollback();
    // Rolled back, so no lock is held upstream: identical transactions from concurrent clients are decided in
    // turn from here (the first holds, the others find its ticket).
    return oneAtATime(`transaction ${key}`, async () => {
      const pending = (await store.list()).find(
        (t) => sameTransaction(t, connection, key) && t.status === 'PENDING_APPROVAL',
      );
      if (pending && exceeded.length === 0) {
        this.events?.held(pending.id);
        return { kind: 'error', fields: heldTransaction(pending, true) };
      }
      return this.holdOnTicket(connection, writes, changed, exceeded, approved, ddlNotes);
    });
  }

  /** Statements 1..N, N heavy and not run, held on one ticket (the same one while it is pending). */
  private async holdHeavy(hold: NonNullable<GuardedTransaction['heavyHold']>): Promise<ErrorFields> {
    const key = templateKeyOf(hold.writes);
    const connection = await this.context.connectionKey();
    const store = await this.context.openTicketStore();
    return oneAtATime(`transaction ${key}`, async () => {
      const pending = (await store.list()).find(
        (t) => sameTransaction(t, connection, key) && t.status === 'PENDING_APPROVAL',
      );
      if (pending) {
        this.events?.held(pending.id);
        return heldTransaction(pending, true, hold.writes.length);
      }
      const answer = await this.holdOnTicket(
        connection,
        hold.writes,
        hold.changed,
        [],
        undefined,
        hold.notes,
        hold.writes.length,
      );
      return answer.kind === 'error' ? answer.fields : refusedError('not run');
    });
  }

  private async holdOnTicket(
    connection: string,
    writes: TransactionRecord['statements'],
    changed: ChangedTable[],
    exceeded: string[],
    approved: Ticket | undefined,
    ddlNotes: string[],
    heavyAt?: number,
  ): Promise<CommitAnswer> {
    const store = await this.context.openTicketStore();
    const db = await this.context.openDb();
    const body = transactionSql(writes);
    const classification = classifySql(body);
    const impact = await analyzeImpact(db, classification, this.context.settings);
    // The rows per table are what the client's own run changed (the preview replays recorded values, whose ids
    // may match nothing now): its rows and its risk are the measured run's, never below the preview's risk.
    impact.tables = changed.map((c) => ({
      schema: c.schema,
      name: c.name,
      via: 'direct',
      inserted: c.inserted,
      updated: c.updated,
      deleted: c.deleted,
    }));
    impact.exactRows = changed.reduce((sum, c) => sum + c.inserted + c.updated + c.deleted, 0);
    impact.risk = riskOfWrite(
      {
        classification,
        rows: impact.exactRows,
        tables: changed.map((c) => `${c.schema}.${c.name}`),
        atLeast: impact.risk,
      },
      this.context.settings.policy,
    ).risk;
    impact.warnings.push(...ddlNotes);
    impact.warnings.push(
      "A transaction through the guard: it commits only as the client's retry with the same statement templates, within these rows per table; sequence values its measured run took are gone.",
    );
    const effects = changed.map((c) => ({
      schema: c.schema,
      name: c.name,
      inserted: c.inserted,
      updated: c.updated,
      deleted: c.deleted,
    }));
    const statements = writes.map((s) => ({ sql: s.sql, template: s.template, read: s.read }));
    const createdBy = `guard user ${this.user}`;
    const ticket = await store.create({
      sql: body,
      origin: 'guardTransaction',
      transaction: { statements, effects },
      connection,
      impact,
      createdBy,
    });
    this.context.logger.info('guard held a transaction', {
      ticket: ticket.id,
      statements: writes.length,
      exceeded: exceeded.join('; '),
    });
    // Shown in VS Code ("Waiting for you") as one card, like a held statement; approving there only decides it.
    await writeProposal(
      this.context.workspaceDir,
      ticket.id,
      body,
      createdBy,
      `one transaction sent through pg-agent guard (${statements.length} statement${statements.length === 1 ? '' : 's'}, in order, with the values of its measured run${heavyAt === undefined ? '' : `; statement ${heavyAt} heavy DDL, analysed, not run`})`,
      heavyAt === undefined
        ? "the client's retry through the guard commits it"
        : `the client's retry runs statements 1..${heavyAt}; it commits if it ends there, else it is held once more at COMMIT`,
    ).catch((error: unknown) =>
      this.context.logger.warn('could not write the proposal file of a held transaction', {
        ticket: ticket.id,
        error: String(error),
      }),
    );
    this.events?.held(ticket.id);
    const fields = heldTransaction(ticket, false, heavyAt);
    if (exceeded.length > 0)
      fields.message += `; the approved ticket ${approved!.id} did not cover it (${exceeded.join('; ')})`;
    return { kind: 'error', fields };
  }

  private async commitApproved(approved: Ticket, connection: string): Promise<CommitAnswer> {
    const xid = (await this.inBand.run('SELECT pg_current_xact_id()::text')).rows[0]?.[0];
    if (!xid) throw new Error('PostgreSQL did not give the transaction an id.');
    const by = `${this.context.executedBy} for guard user ${this.user}`;
    let ticket: Ticket;
    try {
      ticket = await claimInClientTransaction(this.context, this.inBand, {
        ticketId: approved.id,
        connection,
        xid,
        by,
      });
    } catch (error) {
      await this.rollback();
      // Claimed, then refused by the ledger (a reset ticket): the execution that owns the row is what the ticket resolves to.
      const claimed =
        !(error instanceof LedgerRefusal) &&
        (await store(this.context).then((s) => s.get(approved.id)))?.execution?.xid === xid;
      if (claimed)
        await store(this.context)
          .then((s) => s.finish(approved.id, { ok: false, by, xid, comment: toAgentError(error).message }))
          .catch(() => undefined);
      return {
        kind: 'error',
        fields: refusedError(
          `ticket ${approved.id} could not be claimed; rolled back, nothing kept: ${toAgentError(error).message}`,
        ),
      };
    }
    const committed = await this.inBand.run('COMMIT');
    this.reset();
    const s = await store(this.context);
    if (committed.error !== undefined) {
      // Settled from pg_xact_status() by the store when the answer is unclear; here the server said no.
      await s.finish(ticket.id, { ok: false, by, xid, comment: committed.error }).catch(() => undefined);
      return { kind: 'error', fields: { code: '40000', message: committed.error } };
    }
    await s
      .finish(ticket.id, { ok: true, by, xid, comment: "committed by the client's transaction through the guard" })
      .catch((error: unknown) =>
        this.context.logger.error('a guarded transaction committed but its ticket could not be marked executed', {
          ticket: ticket.id,
          error: String(error),
        }),
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
    return new Map(
      answer.rows.map(([relid, schema, name, ins, upd, del]) => [
        Number(relid),
        { schema: schema ?? '', name: name ?? '', inserted: Number(ins), updated: Number(upd), deleted: Number(del) },
      ]),
    );
  }
}

const store = (context: GuardContext) => context.openTicketStore();

/** A guard transaction ticket of this connection whose statements have these templates. */
function sameTransaction(ticket: Ticket, connection: string, key: string): boolean {
  return (
    ticket.kind === 'write' &&
    ticket.connection === connection &&
    isGuardTransaction(ticket) &&
    templateKeyOf(ticket.transaction?.statements ?? []) === key
  );
}

/** The approved rows per table are the effects the ticket's hash covers (ticketHash), not the impact the card draws. */
function hashedBounds(ticket: Ticket): Ticket {
  const tables = (ticket.transaction?.effects ?? []).map((e) => ({ ...e, via: 'direct' as const }));
  return { ...ticket, impact: { ...ticket.impact, tables } };
}

/** PA001 for a whole transaction: approved, the client's same transaction (its values may differ) commits once. */
/** `heavyAt`: held at heavy statement N (heavyDdl.ts), not at COMMIT. */
function heldTransaction(ticket: Ticket, reused: boolean, heavyAt?: number): ErrorFields {
  const held = heldError(ticket, reused);
  if (heavyAt === undefined) {
    return {
      ...held,
      hint: `A person approves it with: pg-agent approvals approve ${ticket.id} (or in VS Code, "Waiting for you"). Then run the same transaction again (same statements; values may differ): it commits once, within the approved rows per table.`,
    };
  }
  return {
    ...held,
    message: held.message.replace(
      /; nothing ran$/,
      `; statement ${heavyAt} is heavy DDL, analysed, not executed; the transaction was rolled back there, nothing kept, no lock held`,
    ),
    hint: `A person approves it with: pg-agent approvals approve ${ticket.id} (or in VS Code, "Waiting for you"). Then run the same transaction again: statements 1..${heavyAt} run for real (${heavyAt} under a short lock_timeout: on 55P03 retry later); a transaction that ends there commits once, a longer one is held once more at its COMMIT for the rest.`,
  };
}

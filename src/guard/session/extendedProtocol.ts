/**
 * The extended protocol of one client (Parse, Bind, Describe, Execute, Close, Sync): its prepared statements
 * and portals as the guard judged them. A read's messages go upstream as the client's bytes; a held statement
 * is parsed upstream (Describe answers for it) but never bound there: its portal is the guard's, run or held
 * at Execute (clientSession.ts holds the state both protocols share).
 */
import type { Db } from '../../core/db/db';
import type { Classification } from '../../core/sql/classification';
import type { CheckedSql } from '../../core/sql/reach/checkSql';
import type { HeldPortal } from '../hold/heldPortal';
import { asksBinary, describeHeldPortal, heldPortalProblem } from '../hold/heldPortal';
import type { UpstreamDescribe } from '../hold/heldPortal';
import {
  ABORTED,
  failedError,
  NOT_IN_TRANSACTION,
  NOT_IN_TRANSACTION_HINT,
  refusedError,
  verdictError,
} from '../hold/heldMessages';
import { bindSql, knownNullBoundSql, nullBoundSql, typeNamesOf } from '../judge/boundSql';
import type { Verdict } from '../judge/judge';
import { MAY_TOUCH_ALL } from '../judge/sessionTouch';
import { endsTransaction, knownTransactionControlOf, transactionControlOf } from '../judge/transactionControl';
import type { GuardedTransaction } from '../transaction/guardedTransaction';
import type { ErrorFields } from '../wire/backendMessages';
import {
  bindComplete,
  closeComplete,
  commandComplete,
  noData,
  parameterDescription,
  parseComplete,
  readyForQuery,
} from '../wire/backendMessages';
import type { FrontendMessage } from '../wire/frontendMessages';
import type { UpstreamLink } from './upstreamLink';

type Statement = { sql: string; paramTypes: number[] } & (
  { kind: 'pass'; control: boolean } | { kind: 'hold'; classification: Classification } | { kind: 'endTransaction' }
);
/** `control`: transaction control (COMMIT…), which never runs upstream while the transaction is measured. */
type Portal = { kind: 'pass'; control?: boolean; recorded?: number } | HeldPortal | { kind: 'endTransaction' };

/** What the extended protocol shares with the client's session (clientSession.ts). */
export interface SessionPort {
  readonly db: Db;
  readonly link: UpstreamLink;
  readonly tx: GuardedTransaction;
  readonly describes: UpstreamDescribe;
  /** The guard rolled back the client's transaction; the client has not ended it yet. */
  aborted(): boolean;
  /** The client ended that transaction (its ROLLBACK or COMMIT, answered ROLLBACK). */
  endAborted(): void;
  judge(sql: string): Promise<Verdict | { kind: 'failed'; error: unknown }>;
  /** The 'pass' `judge` would answer from the verdict cache now (counted as judged), or undefined: `judge` decides. */
  passedBefore(sql: string): Verdict | undefined;
  measure(classification: Classification): Promise<boolean>;
  rollbackUpstream(): Promise<void>;
  refuseControl(): Promise<void>;
  /** `checked`: the check of exactly `sql` (its parse), carried to the impact and the approved run. */
  holdOrRun(sql: string, classification: Classification, simple: boolean, checked?: CheckedSql): Promise<Buffer[]>;
  fail(fields: ErrorFields, withReady: boolean): Promise<void>;
  /** After the guard's own error, messages up to Sync are skipped (as the server does). */
  skipToSync(): void;
  settle(): Promise<void>;
  answer(bytes: Uint8Array): Promise<void>;
  /** A read passed on (the query history). */
  passedRead(sql: string): void;
  /** A Parse of the unnamed statement passed from the verdict cache (the native relay may pass its bytes again). */
  passedParse?(raw: Uint8Array, sql: string, paramTypes: number[]): void;
}

export class ExtendedProtocol {
  private readonly statements = new Map<string, Statement>();
  private readonly portals = new Map<string, Portal>();

  constructor(private readonly s: SessionPort) {}

  /**
   * The message at once, without an async turn, when its method below would only forward it (a read's Parse judged
   * before, a Bind, Describe or Execute of a read's statement or portal, Close, Sync, Flush): true when it was
   * forwarded exactly as that method forwards it; false when nothing was done (the method decides).
   */
  fast(raw: Uint8Array, message: FrontendMessage): boolean {
    if (this.s.aborted()) return false;
    switch (message.type) {
      case 'parse':
        return this.parseFast(raw, message.name, message.sql, message.paramTypes);
      case 'bind': {
        const statement = this.statements.get(message.statement);
        if (statement !== undefined && statement.kind !== 'pass') return false;
        this.bindRead(raw, message.portal, statement);
        return true;
      }
      case 'describe':
        if (!this.upstreamKnows(message.target, message.name)) return false;
        this.s.link.forward(raw, message.target === 'S' ? 'describeStatement' : 'describePortal', true);
        return true;
      case 'execute': {
        const portal = this.portals.get(message.portal);
        if (portal !== undefined && portal.kind !== 'pass') return false;
        if (this.s.tx.measuring && portal?.control) return false;
        this.executeRead(raw, portal);
        return true;
      }
      case 'close':
        if (!this.upstreamKnows(message.target, message.name)) return false;
        this.forwardClose(raw, message.target, message.name);
        return true;
      case 'sync':
        this.s.link.forward(raw, 'sync');
        return true;
      case 'flush':
        this.s.link.send(raw);
        return true;
      default:
        return false;
    }
  }

  /** Parse's pass, when its text's transaction control, its null-bound text and that text's 'pass' are known. */
  private parseFast(raw: Uint8Array, name: string, sql: string, paramTypes: number[]): boolean {
    const control = knownTransactionControlOf(sql);
    if (control === undefined || (this.s.tx.measuring && control.length > 0)) return false;
    const bound = knownNullBoundSql(sql, paramTypes);
    const verdict = bound === undefined ? undefined : this.s.passedBefore(bound);
    if (verdict?.kind !== 'pass') return false;
    this.statements.set(name, { sql, paramTypes, kind: 'pass', control: control.length > 0 });
    this.s.link.forward(raw, 'parse', true, verdict.touch);
    if (name === '' && control.length === 0) this.s.passedParse?.(raw, sql, paramTypes);
    return true;
  }

  /**
   * Back from the native relay: the unnamed statement it last parsed (a read's, passed here before) and whether it
   * bound the unnamed portal from it.
   */
  fromNative(statement: { sql: string; paramTypes: number[] } | 'unknown' | undefined, portal: boolean): void {
    // A read's text no longer remembered here: forgotten, as a statement the upstream may know and the guard does not.
    if (statement === 'unknown') this.statements.delete('');
    else if (statement) this.statements.set('', { ...statement, kind: 'pass', control: false });
    if (portal) this.portals.set('', { kind: 'pass', control: false });
  }

  async parse(raw: Uint8Array, name: string, sql: string, paramTypes: number[]): Promise<void> {
    const s = this.s;
    if (s.aborted()) {
      if (await endsTransaction(sql)) {
        this.statements.set(name, { sql, paramTypes, kind: 'endTransaction' });
        await s.settle();
        await s.answer(parseComplete());
      } else await s.fail(ABORTED, false);
      return;
    }
    const control = (await transactionControlOf(sql)).length > 0;
    if (s.tx.measuring && control) return s.refuseControl();
    let verdict: Verdict | { kind: 'failed'; error: unknown };
    try {
      verdict = await s.judge(await nullBoundSql(sql, await typeNamesOf(s.db, paramTypes)));
    } catch (error) {
      verdict = { kind: 'failed', error };
    }
    if (verdict.kind === 'syntax') verdict = await s.judge(sql);
    // Before Parse reaches the upstream: parsing a write takes the snapshot after which READ WRITE is refused.
    if (verdict.kind === 'hold' && s.link.status === 'T' && !(await s.measure(verdict.classification))) {
      await s.rollbackUpstream();
      return s.fail((await s.tx.takeRefusal()) ?? refusedError(NOT_IN_TRANSACTION, NOT_IN_TRANSACTION_HINT), false);
    }
    if (verdict.kind === 'pass' || verdict.kind === 'hold') {
      // Parsing runs nothing (no planning): a held statement is parsed upstream too, Describe answers for it.
      this.statements.set(
        name,
        verdict.kind === 'pass'
          ? { sql, paramTypes, kind: 'pass', control }
          : { sql, paramTypes, kind: 'hold', classification: verdict.classification },
      );
      // A held statement may yet be measured and committed: whatever it leaves on the session is read back.
      s.link.forward(raw, 'parse', true, verdict.kind === 'pass' ? verdict.touch : MAY_TOUCH_ALL);
      return;
    }
    await s.fail(verdictError(verdict), false);
  }

  async bind(raw: Uint8Array, message: Extract<FrontendMessage, { type: 'bind' }>): Promise<void> {
    const s = this.s;
    const statement = this.statements.get(message.statement);
    if (statement?.kind === 'endTransaction') {
      this.portals.set(message.portal, { kind: 'endTransaction' });
      await s.settle();
      await s.answer(bindComplete());
      return;
    }
    if (s.aborted()) return s.fail(ABORTED, false);
    if (statement?.kind === 'hold') return this.bindHeld(raw, message, statement);
    this.bindRead(raw, message.portal, statement);
  }

  /** A read's statement bound upstream (or one the upstream does not know: its error is the server's). */
  private bindRead(raw: Uint8Array, portal: string, statement: Extract<Statement, { kind: 'pass' }> | undefined): void {
    if (statement) this.s.passedRead(statement.sql);
    this.portals.set(portal, { kind: 'pass', control: statement?.control === true });
    this.s.link.forward(raw, 'bind', true);
  }

  /** Binding plans the statement (planning can run functions), so a held statement is never bound upstream. */
  private async bindHeld(
    raw: Uint8Array,
    message: Extract<FrontendMessage, { type: 'bind' }>,
    statement: Extract<Statement, { kind: 'hold' }>,
  ): Promise<void> {
    const s = this.s;
    try {
      const typeNames = await typeNamesOf(s.db, statement.paramTypes);
      const sql = await bindSql(statement.sql, { values: message.params, formats: message.paramFormats, typeNames });
      // The ticket shows and runs the statement with its values: judged again as such, for its impact.
      const verdict = await s.judge(sql);
      if (verdict.kind !== 'hold')
        return await s.fail(
          verdict.kind === 'pass'
            ? refusedError('the statement changed its nature with its values')
            : verdictError(verdict),
          false,
        );
      // DDL admitted at its Parse runs; a statement prepared earlier (only bound now) is measured and admitted here.
      if (
        (s.tx.measuring && s.tx.admittedDdl(verdict.classification)) ||
        (s.link.status === 'T' && (await s.measure(verdict.classification)))
      ) {
        // Recorded with its values, run for real in the client's transaction: a portal like any other.
        const recorded = await s.tx.add(sql, false, statement.sql);
        this.portals.set(message.portal, { kind: 'pass', recorded });
        s.link.forward(raw, 'bind', true);
        return;
      }
      this.portals.set(message.portal, {
        kind: 'hold',
        sql,
        classification: verdict.classification,
        ...(verdict.checked ? { checked: verdict.checked } : {}),
        statement: message.statement,
        binary: asksBinary(message.resultFormats),
      });
    } catch (error) {
      return s.fail(failedError(error), false);
    }
    await s.settle();
    await s.answer(bindComplete());
  }

  async describe(raw: Uint8Array, target: 'S' | 'P', name: string): Promise<void> {
    const s = this.s;
    const portal = target === 'P' ? this.portals.get(name) : undefined;
    if (portal?.kind === 'hold' && !s.aborted()) {
      // Its statement's RowDescription, asked upstream (heldPortal.ts); after an upstream error it skips to Sync, as the server would.
      await s.settle();
      if (s.link.failed) return;
      const answer = await describeHeldPortal(s.describes, portal);
      return Buffer.isBuffer(answer) ? s.answer(answer) : s.fail(answer, false);
    }
    if (!this.upstreamKnows(target, name)) {
      await s.settle();
      await s.answer(target === 'S' ? Buffer.concat([parameterDescription([]), noData()]) : noData());
      return;
    }
    if (s.aborted()) return s.fail(ABORTED, false);
    s.link.forward(raw, target === 'S' ? 'describeStatement' : 'describePortal', true);
  }

  async execute(raw: Uint8Array, name: string): Promise<void> {
    const s = this.s;
    const portal = this.portals.get(name);
    if (portal?.kind === 'endTransaction') {
      s.endAborted();
      await s.settle();
      await s.answer(commandComplete('ROLLBACK'));
      return;
    }
    if (s.aborted()) return s.fail(ABORTED, false);
    if (s.tx.measuring && portal?.kind === 'pass' && portal.control) return s.refuseControl();
    if (portal?.kind === 'hold') {
      await s.settle();
      const problem = await heldPortalProblem(s.describes, portal);
      if (problem) return s.fail(problem, false);
      const done = await s.holdOrRun(portal.sql, portal.classification, false, portal.checked);
      await s.answer(Buffer.concat(done));
      if (done.some((b) => b[0] === 0x45)) s.skipToSync();
      return;
    }
    this.executeRead(raw, portal);
  }

  private executeRead(raw: Uint8Array, portal: Extract<Portal, { kind: 'pass' }> | undefined): void {
    this.s.tx.expectResult(portal?.recorded, 'execute');
    this.s.link.forward(raw, 'execute', true);
  }

  async close(raw: Uint8Array, target: 'S' | 'P', name: string): Promise<void> {
    const s = this.s;
    if (this.upstreamKnows(target, name)) return this.forwardClose(raw, target, name);
    if (target === 'S') this.statements.delete(name);
    else this.portals.delete(name);
    await s.settle();
    await s.answer(closeComplete());
  }

  /**
   * The upstream has this statement or portal, or has never heard of it (its Describe or Close is the server's to
   * answer); a held portal or a statement that ends an aborted transaction is the guard's own.
   */
  private upstreamKnows(target: 'S' | 'P', name: string): boolean {
    if (target === 'S') return this.statements.get(name)?.kind !== 'endTransaction';
    const portal = this.portals.get(name);
    return portal === undefined || portal.kind === 'pass';
  }

  private forwardClose(raw: Uint8Array, target: 'S' | 'P', name: string): void {
    if (target === 'S') this.statements.delete(name);
    else this.portals.delete(name);
    this.s.link.forward(raw, 'close', true);
  }

  async sync(raw: Uint8Array): Promise<void> {
    const s = this.s;
    // The unnamed portal does not outlive the transaction; named ones the client closes itself.
    if (s.aborted()) {
      await s.settle();
      await s.answer(readyForQuery('E'));
      return;
    }
    s.link.forward(raw, 'sync');
  }
}

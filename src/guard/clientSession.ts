/**
 * One client of the guard, after start-up: every message it sends is judged before anything reaches the
 * upstream (SPEC §5 8). Reads go upstream as the client's own bytes, answers come back as the upstream's
 * bytes; a write outside a transaction never reaches the upstream session: it is held on a ticket (or,
 * approved, run once by the core's executor) and the guard answers in its place, in order (upstreamLink.ts).
 * Inside BEGIN, a write before the transaction's first query makes it measured (transaction/guardedTransaction.ts:
 * writes run there, COMMIT is the guard's); a write after a read rolls it back upstream at once (no lock held
 * while a person decides) and the client sees an aborted transaction until it sends ROLLBACK (or COMMIT).
 */
import type { Db } from '../core/db/db';
import type { Classification } from '../core/sql/classification';
import { bindSql, nullBoundSql, typeNamesOf } from './boundSql';
import { answerBrokerCommand, brokerCommandOf } from './brokerCommands';
import { copyFromStdinProblem } from './copyIn';
import { ClientCopy } from './copyLoad';
import type { GuardContext } from './guardContext';
import {
  ABORTED,
  failedError,
  NOT_IN_TRANSACTION,
  NOT_IN_TRANSACTION_HINT,
  NOT_WHOLE,
  refusedError,
  verdictError,
  WHOLE_HINT,
} from './heldMessages';
import { InBandQuery } from './inBandQuery';
import { HeldRuns } from './heldAnswer';
import type { HeldEvents } from './heldAnswer';
import type { HeldPortal } from './heldPortal';
import { asksBinary, describeHeldPortal, heldPortalProblem, UpstreamDescribe } from './heldPortal';
import type { Verdict } from './judge';
import { judgeSql } from './judge';
import { GuardedTransaction } from './transaction/guardedTransaction';
import { endsTransaction, transactionControlOf } from './transactionControl';
import type { UpstreamSession } from './upstream';
import { UpstreamLink } from './upstreamLink';
import type { ErrorFields, TransactionStatus } from './wire/backendMessages';
import {
  bindComplete,
  closeComplete,
  commandComplete,
  errorResponse,
  noData,
  parameterDescription,
  parseComplete,
  readyForQuery,
} from './wire/backendMessages';
import type { FrontendMessage } from './wire/frontendMessages';
import { MalformedMessage, readFrontendMessage } from './wire/frontendMessages';

type Statement = { sql: string; paramTypes: number[] } & (
  { kind: 'pass'; control: boolean } | { kind: 'hold'; classification: Classification } | { kind: 'endTransaction' }
);
/** `control`: transaction control (COMMIT…), which never runs upstream while the transaction is measured. */
type Portal = { kind: 'pass'; control?: boolean } | HeldPortal | { kind: 'endTransaction' };

export class ClientSession {
  private readonly link: UpstreamLink;
  /** The guard rolled back the client's transaction; the client has not ended it yet. */
  private aborted = false;
  /** After the guard's own error in the extended protocol, messages up to Sync are skipped (as the server does). */
  private skipping = false;
  private readonly statements = new Map<string, Statement>();
  private readonly portals = new Map<string, Portal>();
  /** Held statements (heldAnswer.ts); `held.cancel()` is a CancelRequest's for a held statement or its wait. */
  readonly held: HeldRuns;
  private readonly describes: UpstreamDescribe;
  private readonly copy: ClientCopy;
  private readonly tx: GuardedTransaction;
  private readonly inBand: InBandQuery;

  constructor(
    private readonly context: GuardContext,
    private readonly db: Db,
    upstream: UpstreamSession,
    private readonly user: string,
    toClient: (bytes: Uint8Array) => Promise<void>,
    private readonly events: HeldEvents,
  ) {
    this.link = new UpstreamLink(upstream, toClient, {
      observe: (messages) => this.copy.relay.observe(messages),
      own: (messages) => this.inBand.take(messages) || this.describes.take(messages),
      idle: () => this.tx.reset(),
    });
    this.inBand = new InBandQuery(
      () => this.link.settle(),
      (sql, trailing) => this.link.sendOwnQuery(sql, trailing),
    );
    this.describes = new UpstreamDescribe((bytes) => this.link.send(bytes));
    this.tx = new GuardedTransaction(context, this.inBand, user, events);
    this.held = new HeldRuns(context, user, events);
    this.copy = new ClientCopy(
      { context, db, user, events, inBand: this.inBand, answer: (b) => this.link.answer(b) },
      (b) => this.link.send(b),
      (d) => this.tx.addCopyData(d.comment, d.sha256),
    );
  }

  /** One whole client message; 'close' ends the connection (after a FATAL), 'terminate' is the client's own goodbye. */
  async handle(raw: Uint8Array): Promise<'close' | 'terminate' | undefined> {
    let message: FrontendMessage;
    try {
      message = readFrontendMessage(raw);
    } catch (error) {
      if (!(error instanceof MalformedMessage)) throw error;
      await this.settle();
      await this.answer(
        errorResponse({ severity: 'FATAL', code: '08P01', message: `invalid message: ${error.message}` }),
      );
      return 'close';
    }
    if (await this.copy.take(raw, message)) return undefined;
    if (this.skipping && message.type !== 'sync') return undefined;
    switch (message.type) {
      case 'query':
        await this.query(raw, message.sql);
        return undefined;
      case 'parse':
        await this.parse(raw, message.name, message.sql, message.paramTypes);
        return undefined;
      case 'bind':
        await this.bind(raw, message);
        return undefined;
      case 'describe':
        await this.describe(raw, message.target, message.name);
        return undefined;
      case 'execute':
        await this.execute(raw, message.portal);
        return undefined;
      case 'close':
        await this.close(raw, message.target, message.name);
        return undefined;
      case 'sync':
        await this.sync(raw);
        return undefined;
      case 'flush':
        this.link.send(raw);
        return undefined;
      case 'terminate':
        return 'terminate';
      case 'functionCall':
        await this.fail(
          refusedError(
            'the fast-path function call does not pass through the guard',
            'Call the function in a SELECT: it is then judged like any statement.',
          ),
          true,
        );
        return undefined;
      case 'copyData':
      case 'copyDone':
      case 'copyFail':
        return undefined;
      case 'other':
        await this.settle();
        await this.answer(
          errorResponse({ severity: 'FATAL', code: '08P01', message: `invalid frontend message type ${message.code}` }),
        );
        return 'close';
    }
  }

  /** The client is gone (or the guard stops): the upstream session ends, rolling back whatever it had open. */
  end(): void {
    this.held.end();
    this.inBand.abandon();
    this.describes.abandon();
    this.link.end();
  }

  private async query(raw: Uint8Array, sql: string): Promise<void> {
    if (this.aborted) {
      await this.settle();
      if (await endsTransaction(sql)) {
        this.aborted = false;
        await this.answer(Buffer.concat([commandComplete('ROLLBACK'), readyForQuery('I')]));
      } else await this.answer(Buffer.concat([errorResponse(ABORTED), readyForQuery('E')]));
      return;
    }
    if (this.tx.measuring && (await transactionControlOf(sql)).length > 0) return this.endMeasured(raw, sql);
    // The guard's own commands (brokerCommands.ts), exact by the grammar and outside a transaction only: never sent upstream.
    const own = await brokerCommandOf(sql);
    if (own) {
      await this.settle();
      if (this.link.status === 'I')
        return this.answer(Buffer.concat([await answerBrokerCommand(this.context, own), readyForQuery('I')]));
    }
    const verdict = await this.judge(sql);
    if (verdict.kind === 'pass') {
      this.context.passedRead?.(sql, this.user);
      this.link.forward(raw, 'query');
      return;
    }
    if (verdict.kind === 'hold' && (await this.measure(verdict.classification, true))) {
      await this.tx.add(sql, false);
      this.link.forward(raw, 'query');
      await this.tx.ran();
      return;
    }
    await this.settle();
    if (verdict.kind === 'hold' && this.link.status === 'I' && (await this.copy.load.start(sql))) return;
    if (verdict.kind === 'hold') {
      const done = await this.holdOrRun(sql, verdict.classification, true);
      await this.answer(Buffer.concat([...done, readyForQuery(this.clientStatus())]));
      return;
    }
    await this.answer(Buffer.concat([errorResponse(verdictError(verdict)), readyForQuery(this.clientStatus())]));
  }

  private async parse(raw: Uint8Array, name: string, sql: string, paramTypes: number[]): Promise<void> {
    if (this.aborted) {
      if (await endsTransaction(sql)) {
        this.statements.set(name, { sql, paramTypes, kind: 'endTransaction' });
        await this.settle();
        await this.answer(parseComplete());
      } else await this.fail(ABORTED, false);
      return;
    }
    const control = (await transactionControlOf(sql)).length > 0;
    if (this.tx.measuring && control) return this.refuseControl();
    let verdict: Verdict | { kind: 'failed'; error: unknown };
    try {
      verdict = await this.judge(await nullBoundSql(sql, await typeNamesOf(this.db, paramTypes)));
    } catch (error) {
      verdict = { kind: 'failed', error };
    }
    if (verdict.kind === 'syntax') verdict = await this.judge(sql);
    // Before Parse reaches the upstream: parsing a write takes the snapshot after which READ WRITE is refused.
    if (verdict.kind === 'hold' && this.link.status === 'T' && !(await this.measure(verdict.classification))) {
      await this.rollbackUpstream();
      return this.fail(
        (await this.tx.takeRefusal()) ?? refusedError(NOT_IN_TRANSACTION, NOT_IN_TRANSACTION_HINT),
        false,
      );
    }
    if (verdict.kind === 'pass' || verdict.kind === 'hold') {
      // Parsing runs nothing (no planning): a held statement is parsed upstream too, Describe answers for it.
      this.statements.set(
        name,
        verdict.kind === 'pass'
          ? { sql, paramTypes, kind: 'pass', control }
          : { sql, paramTypes, kind: 'hold', classification: verdict.classification },
      );
      this.link.forward(raw, 'parse', true);
      return;
    }
    await this.fail(verdictError(verdict), false);
  }

  private async bind(raw: Uint8Array, message: Extract<FrontendMessage, { type: 'bind' }>): Promise<void> {
    const statement = this.statements.get(message.statement);
    if (statement?.kind === 'endTransaction') {
      this.portals.set(message.portal, { kind: 'endTransaction' });
      await this.settle();
      await this.answer(bindComplete());
      return;
    }
    if (this.aborted) return this.fail(ABORTED, false);
    if (statement?.kind === 'hold') {
      // Binding plans the statement (planning can run functions), so a held statement is never bound upstream.
      try {
        const typeNames = await typeNamesOf(this.db, statement.paramTypes);
        const sql = await bindSql(statement.sql, { values: message.params, formats: message.paramFormats, typeNames });
        // The ticket shows and runs the statement with its values: judged again as such, for its impact.
        const verdict = await this.judge(sql);
        if (verdict.kind !== 'hold')
          return await this.fail(
            verdict.kind === 'pass'
              ? refusedError('the statement changed its nature with its values')
              : verdictError(verdict),
            false,
          );
        // DDL admitted at its Parse runs; a statement prepared earlier (only bound now) is measured and admitted here.
        if (
          (this.tx.measuring && this.tx.admittedDdl(verdict.classification)) ||
          (this.link.status === 'T' && (await this.measure(verdict.classification)))
        ) {
          // Recorded with its values, run for real in the client's transaction: a portal like any other.
          await this.tx.add(sql, false, statement.sql);
          this.portals.set(message.portal, { kind: 'pass' });
          this.link.forward(raw, 'bind', true);
          return;
        }
        this.portals.set(message.portal, {
          kind: 'hold',
          sql,
          classification: verdict.classification,
          statement: message.statement,
          binary: asksBinary(message.resultFormats),
        });
      } catch (error) {
        return this.fail(failedError(error), false);
      }
      await this.settle();
      await this.answer(bindComplete());
      return;
    }
    if (statement?.kind === 'pass') this.context.passedRead?.(statement.sql, this.user);
    this.portals.set(message.portal, { kind: 'pass', control: statement?.kind === 'pass' && statement.control });
    this.link.forward(raw, 'bind', true);
  }

  private async describe(raw: Uint8Array, target: 'S' | 'P', name: string): Promise<void> {
    const portal = target === 'P' ? this.portals.get(name) : undefined;
    if (portal?.kind === 'hold' && !this.aborted) {
      // Its statement's RowDescription, asked upstream (heldPortal.ts); after an upstream error it skips to Sync, as the server would.
      await this.settle();
      if (this.link.failed) return;
      const answer = await describeHeldPortal(this.describes, portal);
      return Buffer.isBuffer(answer) ? this.answer(answer) : this.fail(answer, false);
    }
    const synthesized =
      target === 'S'
        ? this.statements.get(name)?.kind === 'endTransaction'
        : this.portals.get(name)?.kind !== 'pass' && this.portals.has(name);
    if (synthesized) {
      await this.settle();
      await this.answer(target === 'S' ? Buffer.concat([parameterDescription([]), noData()]) : noData());
      return;
    }
    if (this.aborted) return this.fail(ABORTED, false);
    this.link.forward(raw, target === 'S' ? 'describeStatement' : 'describePortal', true);
  }

  private async execute(raw: Uint8Array, name: string): Promise<void> {
    const portal = this.portals.get(name);
    if (portal?.kind === 'endTransaction') {
      this.aborted = false;
      await this.settle();
      await this.answer(commandComplete('ROLLBACK'));
      return;
    }
    if (this.aborted) return this.fail(ABORTED, false);
    if (this.tx.measuring && portal?.kind === 'pass' && portal.control) return this.refuseControl();
    if (portal?.kind === 'hold') {
      await this.settle();
      const problem = await heldPortalProblem(this.describes, portal);
      if (problem) return this.fail(problem, false);
      const done = await this.holdOrRun(portal.sql, portal.classification, false);
      await this.answer(Buffer.concat(done));
      if (done.some((b) => b[0] === 0x45)) this.skipping = true;
      return;
    }
    this.link.forward(raw, 'execute', true);
  }

  private async close(raw: Uint8Array, target: 'S' | 'P', name: string): Promise<void> {
    const upstreamKnows =
      target === 'S'
        ? this.statements.get(name)?.kind !== 'endTransaction'
        : this.portals.get(name)?.kind === 'pass' || !this.portals.has(name);
    if (target === 'S') this.statements.delete(name);
    else this.portals.delete(name);
    if (!upstreamKnows) {
      await this.settle();
      await this.answer(closeComplete());
      return;
    }
    this.link.forward(raw, 'close', true);
  }

  private async sync(raw: Uint8Array): Promise<void> {
    this.skipping = false;
    // The unnamed portal does not outlive the transaction; named ones the client closes itself.
    if (this.aborted) {
      await this.settle();
      await this.answer(readyForQuery('E'));
      return;
    }
    this.link.forward(raw, 'sync');
  }

  /** Held or run (heldAnswer.ts): the guard's answer (ErrorResponse, or rows and tags) for a statement that is not a read. */
  private async holdOrRun(sql: string, classification: Classification, simple: boolean): Promise<Buffer[]> {
    if (this.link.status !== 'I') {
      await this.rollbackUpstream();
      return [
        errorResponse((await this.tx.takeRefusal()) ?? refusedError(NOT_IN_TRANSACTION, NOT_IN_TRANSACTION_HINT)),
      ];
    }
    const copyProblem = copyFromStdinProblem(classification);
    if (copyProblem) return [errorResponse(copyProblem)];
    // An extended batch's implicit transaction ends upstream first, with the locks its Parse took: neither the
    // preview, nor a --hold wait, nor the approved run on the executor meets a lock of the client's own session.
    await this.link.closeBatch();
    return this.held.answer(sql, classification, simple);
  }

  /** A write inside BEGIN: recorded and run there (true), unless READ WRITE comes too late or its DDL is not cheap (§5 4a). */
  private async measure(classification: Classification, simple = false): Promise<boolean> {
    if (!this.tx.measuring && (this.link.status !== 'T' || this.link.inBatch || !(await this.tx.enter()))) return false;
    return this.tx.admit(classification, this.link.inBatch, simple);
  }

  /** Transaction control while measuring: COMMIT is the guard's (held or committed once), ROLLBACK passes. */
  private async endMeasured(raw: Uint8Array, sql: string): Promise<void> {
    await this.settle();
    const end = await this.tx.end(sql, this.link.status === 'E');
    if (end.kind === 'forward') {
      this.link.forward(raw, 'query');
      return;
    }
    this.aborted = end.aborted;
    await this.answer(end.bytes);
  }

  /** COMMIT, SAVEPOINT… in the extended protocol while measuring: rolled back (a batch's Sync first) and refused. */
  private async refuseControl(): Promise<void> {
    await this.rollbackUpstream();
    this.tx.reset();
    return this.fail(
      refusedError(`${NOT_WHOLE} (sent in the extended protocol); the transaction was rolled back`, WHOLE_HINT),
      false,
    );
  }

  /** The client's transaction ends upstream now: its locks go; the client sees it aborted until it ends it. */
  private async rollbackUpstream(): Promise<void> {
    await this.link.rollback();
    this.aborted = true;
  }

  private clientStatus(): TransactionStatus {
    return this.aborted ? 'E' : this.link.status;
  }

  private async judge(sql: string): Promise<Verdict | { kind: 'failed'; error: unknown }> {
    try {
      return await judgeSql(this.db, sql);
    } catch (error) {
      return { kind: 'failed', error };
    }
  }

  /** The guard's own error in the extended protocol: messages up to Sync are skipped, as the server would. */
  private async fail(fields: ErrorFields, withReady: boolean): Promise<void> {
    await this.settle();
    await this.answer(
      withReady ? Buffer.concat([errorResponse(fields), readyForQuery(this.clientStatus())]) : errorResponse(fields),
    );
    if (!withReady) this.skipping = true;
  }

  private settle(): Promise<void> {
    return this.link.settle();
  }

  private answer(bytes: Uint8Array): Promise<void> {
    return this.link.answer(bytes);
  }
}

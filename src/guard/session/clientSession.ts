/**
 * One client of the guard, after start-up: every message it sends is judged before anything reaches the
 * upstream (SPEC §5 8). Reads go upstream as the client's own bytes, answers come back as the upstream's
 * bytes; a write outside a transaction never reaches the upstream session: it is held on a ticket (or,
 * approved, run once by the core's executor) and the guard answers in its place, in order (upstreamLink.ts).
 * Inside BEGIN, a write before the transaction's first query makes it measured (transaction/guardedTransaction.ts:
 * writes run there, COMMIT is the guard's); a write after a read rolls it back upstream at once (no lock held
 * while a person decides) and the client sees an aborted transaction until it sends ROLLBACK (or COMMIT).
 */
import type { Db } from '../../core/db/db';
import type { Classification } from '../../core/sql/classification';
import type { CheckedSql } from '../../core/sql/reach/checkSql';
import { answerBrokerCommand, brokerCommandOf, mayBeBrokerCommand } from '../brokerCommands';
import { copyFromStdinProblem } from '../copy/copyIn';
import { ClientCopy } from '../copy/copyLoad';
import type { GuardContext } from '../guardContext';
import type { GuardRole } from '../guardUsers';
import {
  ABORTED,
  NOT_IN_TRANSACTION,
  NOT_IN_TRANSACTION_HINT,
  NOT_WHOLE,
  refusedError,
  verdictError,
  WHOLE_HINT,
} from '../hold/heldMessages';
import { InBandQuery } from './inBandQuery';
import { HeldRuns } from '../hold/heldAnswer';
import type { HeldEvents } from '../hold/heldAnswer';
import { UpstreamDescribe } from '../hold/heldPortal';
import type { Verdict } from '../judge/judge';
import { judgeSql, passedBefore } from '../judge/judge';
import { MAY_TOUCH_ALL } from '../judge/sessionTouch';
import { GuardedTransaction } from '../transaction/guardedTransaction';
import { endsTransaction, transactionControlOf } from '../judge/transactionControl';
import type { UpstreamSession } from './upstream';
import type { ClientSocket } from './clientSocket';
import type { NativeRelay, Released } from './nativeRelay';
import { COUNT_BIND, COUNT_PARSE, nativeRelayOf } from './nativeRelay';
import { UpstreamLink } from './upstreamLink';
import { ExtendedProtocol } from './extendedProtocol';
import type { ErrorFields, TransactionStatus } from '../wire/backendMessages';
import { commandComplete, errorResponse, readyForQuery } from '../wire/backendMessages';
import type { FrontendMessage } from '../wire/frontendMessages';
import { asciiQueryText, MalformedMessage, readFrontendMessage } from '../wire/frontendMessages';

const QUERY = 0x51;
/** Parse, Bind, Describe, Execute, Close, Sync, Flush: the extended protocol's messages its fast path may take. */
const EXTENDED = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x53, 0x48]);

export class ClientSession {
  private readonly link: UpstreamLink;
  /** The guard rolled back the client's transaction; the client has not ended it yet. */
  private aborted = false;
  /** After the guard's own error in the extended protocol, messages up to Sync are skipped (as the server does). */
  private skipping = false;
  private readonly extended: ExtendedProtocol;
  /** Held statements (heldAnswer.ts); `held.cancel()` is a CancelRequest's for a held statement or its wait. */
  readonly held: HeldRuns;
  private readonly describes: UpstreamDescribe;
  private readonly copy: ClientCopy;
  private readonly tx: GuardedTransaction;
  private readonly inBand: InBandQuery;
  /**
   * The native relay (nativeRelay.ts), when built and this session's sockets are its own: `id` while it holds
   * them; `streak` counts the Queries passed here since it last gave them back (it takes them only after one).
   */
  private native:
    { relay: NativeRelay; wire: ClientSocket; id?: number; streak: number; scheduled: boolean } | undefined;

  constructor(
    private readonly context: GuardContext,
    private readonly db: Db,
    private readonly upstream: UpstreamSession,
    private readonly user: string,
    /** Bytes to the client: done when it returns, or when its promise resolves. */
    toClient: (bytes: Uint8Array) => Promise<void> | void,
    private readonly events: HeldEvents,
    /** What the guard's own commands show this user (guardUsers.ts). */
    private readonly role: GuardRole = 'client',
  ) {
    this.link = new UpstreamLink(upstream, toClient, {
      observe: (messages) => {
        this.copy.relay.observe(messages);
        this.tx.observe(messages);
      },
      own: (messages) => this.inBand.take(messages) || this.describes.take(messages),
      idle: () => this.tx.reset(),
      full: () => this.tx.observing || this.inBand.busy || this.describes.busy,
      quiet: () => this.nativeSoon(),
    });
    this.inBand = new InBandQuery(
      () => this.link.settle(),
      (sql, trailing) => this.link.sendOwnQuery(sql, trailing),
    );
    this.describes = new UpstreamDescribe((bytes) => this.link.send(bytes));
    this.tx = new GuardedTransaction(context, this.inBand, user, events);
    this.held = new HeldRuns(context, user, events);
    this.extended = new ExtendedProtocol({
      db,
      link: this.link,
      tx: this.tx,
      describes: this.describes,
      aborted: () => this.aborted,
      endAborted: () => (this.aborted = false),
      judge: (sql) => this.judge(sql),
      passedBefore: (sql) => this.passedBefore(sql),
      measure: (classification) => this.measure(classification),
      rollbackUpstream: () => this.rollbackUpstream(),
      refuseControl: () => this.refuseControl(),
      holdOrRun: (sql, classification, simple, checked) => this.holdOrRun(sql, classification, simple, checked),
      fail: (fields, withReady) => this.fail(fields, withReady),
      skipToSync: () => (this.skipping = true),
      settle: () => this.settle(),
      answer: (bytes) => this.answer(bytes),
      passedRead: (sql) => this.context.passedRead?.(sql, this.user),
      passedParse: (raw, sql, paramTypes) => {
        if (!this.native) return;
        this.native.relay.allowParse(raw, sql, paramTypes);
        this.native.streak++;
      },
    });
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
        await this.extended.parse(raw, message.name, message.sql, message.paramTypes);
        return undefined;
      case 'bind':
        await this.extended.bind(raw, message);
        return undefined;
      case 'describe':
        await this.extended.describe(raw, message.target, message.name);
        return undefined;
      case 'execute':
        await this.extended.execute(raw, message.portal);
        return undefined;
      case 'close':
        await this.extended.close(raw, message.target, message.name);
        return undefined;
      case 'sync':
        this.skipping = false;
        await this.extended.sync(raw);
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

  /**
   * A read's hot path, without an async turn, in a session with nothing to look at first (no aborted or measured
   * transaction, no COPY, no error to skip past): a simple Query whose text judgeSql would pass from its verdict
   * cache now (not the guard's own command), or an extended-protocol message its method would only forward
   * (extendedProtocol.ts `fast`), is forwarded as `handle` would forward it. False: `handle` takes it.
   */
  passFast(raw: Uint8Array): boolean {
    if (this.aborted || this.skipping || this.tx.measuring || this.copy.load.active) return false;
    if (raw[0] !== QUERY) return EXTENDED.has(raw[0]!) && this.extendedFast(raw);
    const sql = asciiQueryText(raw);
    const verdict = sql === undefined || mayBeBrokerCommand(sql) ? undefined : this.passedBefore(sql);
    if (verdict?.kind !== 'pass') return false;
    this.copy.relay.interrupt('query');
    this.context.passedRead?.(sql!, this.user);
    this.tx.expectResult(undefined, 'query');
    this.link.forward(raw, 'query', false, verdict.touch);
    if (this.native) {
      this.native.relay.allow(sql!);
      this.native.streak++;
    }
    return true;
  }

  /**
   * The client's socket as the guard reads it itself (plain TCP, after start-up): from now on, while the session is
   * quiet and its last Query was passed from the verdict cache, the native relay may hold both sockets.
   */
  useNative(wire: ClientSocket): void {
    if (!this.upstream.native) return;
    const relay = nativeRelayOf(this.db, (line) => this.context.logger.info(line));
    if (relay) this.native = { relay, wire, streak: 0, scheduled: false };
  }

  /** After this turn (its writes flushed), the native relay takes the sockets if nothing of the guard's is in flight. */
  private nativeSoon(): void {
    const native = this.native;
    if (!native || native.scheduled || native.id !== undefined || native.streak === 0) return;
    native.scheduled = true;
    setImmediate(() => {
      native.scheduled = false;
      this.lendNative();
    });
  }

  private lendNative(): void {
    const native = this.native;
    const upstream = this.upstream.native;
    if (!native || !upstream || native.id !== undefined || native.streak === 0) return;
    if (this.aborted || this.skipping || this.tx.measuring || this.copy.load.active) return;
    if (this.inBand.busy || this.describes.busy || !this.link.idle) return;
    const clientFd = native.wire.quietFd;
    const upstreamFd = upstream.quietFd();
    if (clientFd === undefined || upstreamFd === undefined) return;
    const id = native.relay.adopt(clientFd, upstreamFd, (released) => this.nativeBack(released));
    if (id === undefined) return;
    // In this same turn, before Node's loop reads either socket again.
    native.id = id;
    const reclaim = () => this.reclaimNative();
    native.wire.reclaim = reclaim;
    native.wire.suspend();
    upstream.suspend(reclaim);
  }

  /** The guard must write to a socket the native relay holds: taken back first, synchronously. */
  private reclaimNative(): void {
    const native = this.native;
    if (native?.id === undefined) return;
    const released = native.relay.release(native.id);
    native.id = undefined;
    if (released) this.nativeBack(released);
  }

  /** The native relay gave the sockets back: what it forwarded is counted, what it had not passed on is handled here. */
  private nativeBack(released: Released): void {
    const native = this.native;
    const upstream = this.upstream.native;
    if (!native || !upstream) return;
    native.id = undefined;
    native.streak = 0;
    native.wire.reclaim = undefined;
    let forwarded = 0;
    for (const [counted, times] of released.counts) if ((counted & 3) !== COUNT_BIND) forwarded += times;
    this.context.logger.debug('guard native relay gave a session back', {
      user: this.user,
      reason: released.reason,
      forwarded,
    });
    // What it forwarded, counted as the JavaScript path counts it: each Query and Parse judged (a pass), each Query
    // and Bind a read passed on.
    for (const [counted, times] of released.counts) {
      const sql = native.relay.textOf(counted >>> 2)?.sql;
      const kind = counted & 3;
      for (let i = 0; i < times; i++) {
        if (kind !== COUNT_BIND) this.events.judged?.('pass');
        if (kind !== COUNT_PARSE && sql !== undefined) this.context.passedRead?.(sql, this.user);
      }
    }
    const statement =
      released.statement >= 0 ? (native.relay.textOf(released.statement) ?? ('unknown' as const)) : undefined;
    this.extended.fromNative(statement, released.portal);
    native.wire.restoreWrites(released.toClient);
    this.link.fromNative(released.awaited, released.status);
    upstream.resume(released.fromUpstream, released.toUpstream);
    native.wire.resume(released.fromClient);
  }

  private extendedFast(raw: Uint8Array): boolean {
    let message: FrontendMessage;
    try {
      message = readFrontendMessage(raw);
    } catch {
      return false; // handle() answers it
    }
    // In COPY mode a Parse, Bind… fails the COPY upstream first, as handle() does (copyLoad.ts take).
    this.copy.relay.interrupt(message.type);
    return this.extended.fast(raw, message);
  }

  /** What judge() would answer from the verdict cache now, when that is a pass (counted as judged), else undefined. */
  private passedBefore(sql: string): Verdict | undefined {
    const verdict = passedBefore(this.db, sql);
    if (verdict?.kind === 'pass') this.events.judged?.('pass');
    return verdict;
  }

  /** The client is gone (or the guard stops): the upstream session ends, rolling back whatever it had open. */
  end(): void {
    this.reclaimNative();
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
        return this.answer(
          Buffer.concat([
            await answerBrokerCommand(this.context, own, { user: this.user, role: this.role }),
            readyForQuery('I'),
          ]),
        );
    }
    const verdict = await this.judge(sql);
    if (verdict.kind === 'pass') {
      this.context.passedRead?.(sql, this.user);
      this.tx.expectResult(undefined, 'query');
      this.link.forward(raw, 'query', false, verdict.touch);
      return;
    }
    if (verdict.kind === 'hold' && (await this.measure(verdict.classification, true))) {
      this.tx.expectResult(await this.tx.add(sql, false), 'query');
      // Measured, it may commit once approved: whatever it leaves on the session is read back.
      this.link.forward(raw, 'query', false, MAY_TOUCH_ALL);
      await this.tx.ran();
      return;
    }
    await this.settle();
    if (
      verdict.kind === 'hold' &&
      this.link.status === 'I' &&
      (await this.copy.load.start(sql, verdict.checked?.parsed))
    )
      return;
    if (verdict.kind === 'hold') {
      const done = await this.holdOrRun(sql, verdict.classification, true, verdict.checked);
      await this.answer(Buffer.concat([...done, readyForQuery(this.clientStatus())]));
      return;
    }
    await this.answer(Buffer.concat([errorResponse(verdictError(verdict)), readyForQuery(this.clientStatus())]));
  }

  /** Held or run (heldAnswer.ts): the guard's answer (ErrorResponse, or rows and tags) for a statement that is not a read. */
  private async holdOrRun(
    sql: string,
    classification: Classification,
    simple: boolean,
    checked?: CheckedSql,
  ): Promise<Buffer[]> {
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
    return this.held.answer(sql, classification, simple, checked);
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
      const verdict = await judgeSql(this.db, sql);
      this.events.judged?.(verdict.kind);
      return verdict;
    } catch (error) {
      this.events.judged?.('failed');
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

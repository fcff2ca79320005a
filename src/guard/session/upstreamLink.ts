/**
 * A client session's side of its upstream connection: what the guard forwarded and what the upstream still
 * owes for it (wire/pendingResponses.ts), the upstream's transaction status, whether an extended batch is open
 * there, and the relay of the upstream's bytes to the client. The guard's own commands in that session (a
 * Sync closing a batch, a ROLLBACK, an in-band query) have their answers kept from the client; notifications
 * that come with them still reach it.
 */
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import type { SessionTouch } from '../judge/sessionTouch';
import type { UpstreamSession } from './upstream';
import type { TransactionStatus } from '../wire/backendMessages';
import { notificationsIn } from '../wire/backendMessages';
import type { Awaited } from '../wire/pendingResponses';
import { PendingResponses } from '../wire/pendingResponses';

export interface UpstreamHooks {
  /** Every batch of upstream messages, before it is relayed (COPY's relay watches them). */
  observe(messages: readonly BackendMessage[]): void;
  /** True when the messages answer the guard's own request (an in-band query, a Describe): not relayed. */
  own(messages: readonly BackendMessage[]): boolean;
  /** The upstream is out of any transaction (ReadyForQuery 'I'). */
  idle(): void;
  /** Every upstream message must be decoded now (a hook reads more than names and statuses). */
  full(): boolean;
  /** The upstream answered everything forwarded so far (the session may lend its sockets to the native relay). */
  quiet?(): void;
}

/** The native relay's letters for what the upstream still owes (native/guardRelay). */
const NATIVE_AWAITED: Record<string, Awaited> = {
  q: 'query',
  p: 'parse',
  b: 'bind',
  P: 'describePortal',
  S: 'describeStatement',
  e: 'execute',
  s: 'sync',
};

const DONE = Promise.resolve();

export class UpstreamLink {
  private readonly pending = new PendingResponses();
  /** The upstream's transaction status at its last ReadyForQuery. */
  status: TransactionStatus = 'I';
  /** The upstream answered an error since the last ReadyForQuery: it skips everything up to Sync. */
  failed = false;
  /** Extended-protocol messages went upstream since the last Sync (the server is inside that batch). */
  inBatch = false;
  /** ReadyForQuery answers of the guard's own upstream commands, not the client's. */
  private swallow = 0;
  private closed = false;

  constructor(
    private readonly upstream: UpstreamSession,
    private readonly toClient: (bytes: Uint8Array) => Promise<void> | void,
    private readonly hooks: UpstreamHooks,
  ) {
    upstream.onChunk(
      (chunk, messages) => this.fromUpstream(chunk, messages),
      () => hooks.full(),
    );
  }

  /**
   * A client message sent on as it is, its answer awaited; `batch`: an extended-protocol message before Sync;
   * `touch`: a judged Query's or Parse's (judge/sessionTouch.ts).
   */
  forward(raw: Uint8Array, awaited: Awaited, batch = false, touch?: SessionTouch): void {
    this.pending.expect(awaited);
    if (batch) this.inBatch = true;
    if (awaited === 'sync') this.inBatch = false;
    this.upstream.send(raw, touch);
  }

  /** Nothing forwarded is unanswered, outside any transaction or batch, with no command of the guard's own in flight. */
  get idle(): boolean {
    return (
      !this.closed &&
      this.pending.size === 0 &&
      this.status === 'I' &&
      !this.inBatch &&
      !this.failed &&
      this.swallow === 0
    );
  }

  /** Back from the native relay: what it forwarded and the upstream still owes, and the status it last saw. */
  fromNative(awaited: string, status: string): void {
    for (const letter of awaited) this.pending.expect(NATIVE_AWAITED[letter]!);
    if (status === 'I' || status === 'T' || status === 'E') this.status = status;
    if (this.status === 'I' && awaited.length === 0) this.hooks.idle();
  }

  /** Bytes whose answer the guard reads itself (a Flush, its own Describe). */
  send(raw: Uint8Array): void {
    this.upstream.send(raw);
  }

  /** Waits until the upstream answered everything forwarded so far (flushing what it buffers). */
  async settle(): Promise<void> {
    if (this.pending.size === 0) return;
    this.upstream.send(serialize.flush());
    await this.pending.settled();
  }

  /** Bytes to the client, unless it is gone. */
  answer(bytes: Uint8Array): Promise<void> {
    if (this.closed) return DONE;
    const written = this.toClient(bytes);
    return written ? written.catch(() => undefined) : DONE;
  }

  /** Ends an extended batch in progress upstream with a Sync of the guard's own (its ReadyForQuery swallowed). */
  async closeBatch(): Promise<void> {
    if (!this.inBatch) return;
    this.inBatch = false;
    this.swallow++;
    this.pending.expect('sync');
    this.upstream.send(serialize.sync());
    await this.pending.settled();
  }

  /** The client's transaction ends upstream now (a batch's Sync first, so the ROLLBACK is not inside it): its locks go. */
  async rollback(): Promise<void> {
    await this.closeBatch();
    this.swallow++;
    this.pending.expect('query');
    this.upstream.send(serialize.query('ROLLBACK'));
    await this.pending.settled();
  }

  /** The guard's own simple query (InBandQuery), with the client's bytes that must follow it. */
  sendOwnQuery(sql: string, trailing?: Uint8Array): void {
    this.pending.expect('query');
    this.upstream.send(trailing ? Buffer.concat([serialize.query(sql), trailing]) : serialize.query(sql));
  }

  /** The client is gone (or the guard stops): the upstream session ends, rolling back whatever it had open. */
  end(): void {
    this.closed = true;
    this.pending.abandon();
    this.upstream.close();
  }

  private fromUpstream(chunk: Buffer, messages: BackendMessage[]): void {
    let swallowed = this.swallow > 0;
    this.hooks.observe(messages);
    for (const message of messages) {
      this.pending.observe(message);
      if (message.name === 'error') this.failed = true;
      if (message.name === 'readyForQuery') {
        this.failed = false;
        const status = (message as BackendMessage & { status: string }).status;
        if (status === 'I' || status === 'T' || status === 'E') this.status = status;
        if (status === 'I') this.hooks.idle();
        if (this.swallow > 0) {
          this.swallow--;
          swallowed = true;
        }
      }
    }
    const relayed = this.hooks.own(messages) || swallowed ? notificationsIn(messages) : chunk;
    if (relayed.length > 0) void this.answer(relayed);
    if (this.pending.size === 0) this.hooks.quiet?.();
  }
}

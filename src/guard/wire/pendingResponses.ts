/**
 * What the upstream still owes for the messages the guard forwarded, so that an answer the guard writes
 * itself (a held statement's error, a synthesized ParseComplete) reaches the client after everything the
 * upstream answers to earlier messages, exactly where PostgreSQL would have put it.
 *
 * Each forwarded message waits for the message that ends its answer (ParseComplete, BindComplete,
 * RowDescription or NoData, CommandComplete/EmptyQueryResponse/PortalSuspended, CloseComplete,
 * ReadyForQuery). An ErrorResponse in the extended protocol ends its message and skips everything up to
 * the next Sync, as the server does; inside a simple Query only ReadyForQuery ends it.
 */
import type { BackendMessage } from 'pg-protocol/dist/messages';

export type Awaited =
  'query' | 'parse' | 'bind' | 'describeStatement' | 'describePortal' | 'execute' | 'close' | 'sync';

const ENDS: Record<Awaited, readonly string[]> = {
  query: ['readyForQuery'],
  parse: ['parseComplete'],
  bind: ['bindComplete'],
  describeStatement: ['rowDescription', 'noData'],
  describePortal: ['rowDescription', 'noData'],
  execute: ['commandComplete', 'emptyQuery', 'portalSuspended'],
  close: ['closeComplete'],
  sync: ['readyForQuery'],
};

export class PendingResponses {
  private readonly queue: Awaited[] = [];
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.queue.length;
  }

  /** How many ReadyForQuery the upstream still owes (one per forwarded Query and Sync). */
  get readyOwed(): number {
    return this.queue.filter((a) => a === 'query' || a === 'sync').length;
  }

  expect(awaited: Awaited): void {
    this.queue.push(awaited);
  }

  /** Reads one upstream message; true when it settled something. */
  observe(message: BackendMessage): void {
    const head = this.queue[0];
    if (head === undefined) return;
    if (message.name === 'error' && head !== 'query') {
      // The failed message and every message after it up to the next Sync get no answer.
      while (this.queue.length > 0 && this.queue[0] !== 'sync' && this.queue[0] !== 'query') this.queue.shift();
    } else if (ENDS[head].includes(message.name)) {
      this.queue.shift();
    }
    if (this.queue.length === 0) this.release();
  }

  /** Resolves once the upstream answered everything forwarded so far. */
  settled(): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The upstream is gone: nobody will answer; waiters go on (and find the session closed). */
  abandon(): void {
    this.queue.length = 0;
    this.release();
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

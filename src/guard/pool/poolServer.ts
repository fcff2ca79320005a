/**
 * One upstream session of a transaction pool. It is bound to one client at a time (pooledUpstream.ts), or
 * idle in the pool. It knows, in order, what it owes for every message sent to it (`queue`): the client's
 * messages (their answers relayed to that client), answers the pool gives itself in their place (a
 * ParseComplete for a statement this session already has), and the pool's own messages (a statement
 * parsed again here, settings set or read back), whose answers are kept from the client, so the client sees
 * exactly the answers it would get from a session of its own.
 */
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import type { UpstreamSession } from '../session/upstream';
import type { TransactionStatus } from '../wire/backendMessages';
import { answerEnds, BackendCutter } from './poolMessages';

export interface OwnAnswer {
  rows: (string | null)[][];
  error?: { message: string; code?: string };
}

/** The client bound to a session (pooledUpstream.ts). */
export interface PoolClient {
  deliver(bytes: Buffer, messages: BackendMessage[]): void;
  /** Everything sent is answered, no extended batch is open and the session is out of any transaction. */
  serverIdle(): void;
  serverClosed(error?: Error): void;
}

type Entry =
  | { kind: 'client'; ends: string; prepared?: string }
  | { kind: 'synthetic'; answer: (status: TransactionStatus) => SyntheticAnswer }
  | { kind: 'ownParse'; prepared?: string }
  | { kind: 'ownClose' }
  | { kind: 'ownQuery'; answer: OwnAnswer; done: OwnDone };

/** An answer the pool gives in the server's place: its bytes and the messages they are. */
export interface SyntheticAnswer {
  bytes: Buffer;
  messages: BackendMessage[];
}

/** An own query's answer; what it returns is relayed to the client in that place (a NOTICE). */
type OwnDone = (answer: OwnAnswer) => void | { bytes: Buffer; message: BackendMessage };

type Parsed = BackendMessage & { fields?: (string | null)[]; message?: string; code?: string };

export class PoolServer {
  client: PoolClient | undefined;
  status: TransactionStatus = 'I';
  /** Extended-protocol messages were sent since the last Sync. */
  private batch = false;
  /** The pool's names of the statements prepared on this session (`pending` until ParseComplete), oldest first. */
  readonly prepared = new Map<string, 'pending' | 'ready'>();
  /** The text (with its types) of this session's unnamed statement, when the pool knows it. */
  unnamedKey: string | undefined;
  /** The pooled settings' values on this session now. */
  settings: Map<string, string>;
  closed = false;
  private readonly queue: Entry[] = [];
  private readonly cutter = new BackendCutter();
  private flushing = false;

  constructor(
    private readonly session: UpstreamSession,
    settings: ReadonlyMap<string, string>,
    private readonly gone: (server: PoolServer) => void,
  ) {
    this.settings = new Map(settings);
    session.onChunk((chunk, messages) => this.fromServer(chunk, messages));
    session.onClose((error) => {
      this.closed = true;
      for (const entry of this.queue.splice(0))
        if (entry.kind === 'ownQuery') entry.done({ rows: [], error: { message: 'the upstream session ended' } });
      this.client?.serverClosed(error);
      this.client = undefined;
      this.gone(this);
    });
  }

  get processId(): number {
    return this.session.processId;
  }

  get secretKey(): number {
    return this.session.secretKey;
  }

  get parameters(): [string, string][] {
    return this.session.parameters;
  }

  /** Anything owed, an open batch or an open transaction. */
  get busy(): boolean {
    return this.queue.length > 0 || this.batch || this.status !== 'I';
  }

  /** A client's message, its answer relayed (`prepared`: a Parse of this pool name). */
  send(message: Buffer, prepared?: string): void {
    const type = message[0]!;
    const ends = answerEnds(type);
    if (ends) this.queue.push(prepared ? { kind: 'client', ends, prepared } : { kind: 'client', ends });
    if (type === 0x53) this.batch = false;
    else if (ends && ends !== 'Z') this.batch = true;
    this.session.send(message);
  }

  /** An answer the pool gives itself, in its place among the server's answers. */
  synthetic(bytes: Buffer, message: BackendMessage): void {
    this.answerInPlace(() => ({ bytes, messages: [message] }));
  }

  /**
   * An answer the pool gives itself in place of a whole simple Query, made when its turn comes, from the
   * session's transaction status then (what the server's answer would depend on).
   */
  answerInPlace(answer: (status: TransactionStatus) => SyntheticAnswer): void {
    this.queue.push({ kind: 'synthetic', answer });
    if (this.queue.length === 1) this.scheduleFlush();
  }

  /** A statement the client prepared on another session, parsed here before its use (its ParseComplete kept). */
  ownParse(message: Buffer, prepared?: string): void {
    this.queue.push(prepared ? { kind: 'ownParse', prepared } : { kind: 'ownParse' });
    this.batch = true;
    this.session.send(message);
  }

  /** Forgets a statement on the server (its CloseComplete kept). */
  ownClose(name: string): void {
    this.prepared.delete(name);
    this.queue.push({ kind: 'ownClose' });
    this.batch = true;
    this.session.send(serialize.close({ type: 'S', name }));
  }

  /** The pool's own simple query; its answer is never relayed. */
  query(sql: string): Promise<OwnAnswer> {
    return new Promise((done) => this.ask(sql, (answer) => done(answer)));
  }

  /** `query`, its answer handed over as it arrives (before the server's next answers are relayed). */
  ask(sql: string, done: OwnDone): void {
    this.unnamedKey = undefined;
    if (this.closed) {
      done({ rows: [], error: { message: 'the upstream session ended' } });
      return;
    }
    this.queue.push({ kind: 'ownQuery', answer: { rows: [] }, done });
    this.session.send(serialize.query(sql));
  }

  pause(): void {
    this.session.pause();
  }

  resume(): void {
    this.session.resume();
  }

  close(): void {
    this.session.close();
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = true;
    queueMicrotask(() => {
      this.flushing = false;
      const out: Buffer[] = [];
      const messages: BackendMessage[] = [];
      this.emitSynthetic(out, messages);
      this.finish(out, messages);
    });
  }

  private emitSynthetic(out: Buffer[], messages: BackendMessage[]): void {
    while (this.queue[0]?.kind === 'synthetic') {
      const entry = this.queue.shift() as Extract<Entry, { kind: 'synthetic' }>;
      const answer = entry.answer(this.status);
      out.push(answer.bytes);
      messages.push(...answer.messages);
    }
  }

  private fromServer(chunk: Buffer, parsed: BackendMessage[]): void {
    const { messages, whole } = this.cutter.cut(chunk);
    const out: Buffer[] = [];
    const relayed: BackendMessage[] = [];
    let exact = whole && messages.length === parsed.length;
    for (let i = 0; i < messages.length; i++) {
      const bytes = messages[i]!;
      const message = parsed[i] as Parsed;
      const before = out.length;
      this.take(bytes, message, out, relayed);
      if (out.length !== before + 1 || out[before] !== bytes) exact = false;
    }
    if (exact && out.length === messages.length) return this.finish([chunk], relayed, true);
    this.finish(out, relayed);
  }

  private finish(out: Buffer[], messages: BackendMessage[], asIs = false): void {
    if (out.length > 0 && this.client) this.client.deliver(asIs ? out[0]! : Buffer.concat(out), messages);
    if (!this.busy) this.client?.serverIdle();
  }

  /** One whole server message: relayed to the client or kept, and what it ends. */
  private take(bytes: Buffer, message: Parsed, out: Buffer[], relayed: BackendMessage[]): void {
    const type = String.fromCharCode(bytes[0]!);
    const relay = () => {
      out.push(bytes);
      relayed.push(message);
    };
    if (type === 'Z') this.status = String.fromCharCode(bytes[5]!) as TransactionStatus;
    this.emitSynthetic(out, relayed);
    const head = this.queue[0];
    if (type === 'A' || type === 'N' || type === 'S' || head === undefined) {
      // Notifications, notices and parameter changes reach the client as they come (kept while the session is idle).
      if (head?.kind !== 'ownQuery' || type !== 'N') relay();
      return;
    }
    if (head.kind === 'ownQuery') {
      if (type === 'D' && message.fields) head.answer.rows.push(message.fields);
      if (type === 'E')
        head.answer.error = { message: message.message ?? 'error', ...(message.code ? { code: message.code } : {}) };
      if (type === 'Z') {
        this.queue.shift();
        const extra = head.done(head.answer);
        if (extra) {
          out.push(extra.bytes);
          relayed.push(extra.message);
        }
        this.emitSynthetic(out, relayed);
      }
      return;
    }
    if (type === 'E') {
      // The failed message and everything after it up to Sync get no answer (the server skips them); the client sees the error.
      relay();
      if (head.kind === 'client' && head.ends === 'Z') return;
      while (
        this.queue.length > 0 &&
        !(this.queue[0]!.kind === 'client' && (this.queue[0] as { ends: string }).ends === 'Z')
      ) {
        const dropped = this.queue.shift()!;
        if ((dropped.kind === 'client' || dropped.kind === 'ownParse') && dropped.prepared)
          this.prepared.delete(dropped.prepared);
      }
      return;
    }
    if (head.kind === 'client') {
      relay();
      if (!head.ends.includes(type)) return;
      this.queue.shift();
      if (head.prepared) this.prepared.set(head.prepared, 'ready');
    } else if (head.kind === 'ownParse' && type === '1') {
      this.queue.shift();
      if (head.prepared) this.prepared.set(head.prepared, 'ready');
    } else if (head.kind === 'ownClose' && type === '3') {
      this.queue.shift();
    } else {
      relay();
    }
    this.emitSynthetic(out, relayed);
  }
}

/**
 * A client's socket as the guard reads and writes it. Until authentication pg-gateway has it (TLS, start-up,
 * SCRAM) through a web-stream pair that hands it one chunk each time it asks (so it never holds bytes it has
 * not asked for). From then on, on a plain TCP connection, the guard takes the socket over: it cuts the
 * messages itself and writes straight to the socket, without pg-gateway's stream layers, its promise per
 * message and its flushed-write wait on the hot path. The switch happens when pg-gateway asks for its next
 * chunk after authentication: every byte it had is handled, its ReadyForQuery is in the socket, and the chunks
 * that came meanwhile are the guard's, in order. A TLS connection stays with pg-gateway (its bytes are TLS
 * records).
 */
import type { Socket } from 'node:net';

export interface WebDuplex {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
}

/** Node's TCP handle under a socket: its reading is stopped while the native relay has the socket. */
export interface RawHandle {
  reading: boolean;
  fd?: number;
  readStart(): number;
  readStop(): number;
}

/** The TCP handle under `socket` (Node's own field: what the native relay reads and writes). */
export function rawHandle(socket: Socket): RawHandle | undefined {
  return (socket as unknown as { _handle?: RawHandle })._handle;
}

/**
 * Node stops reading a socket's handle, and cannot start again (its stream asks readStart() again whenever it wants
 * more bytes: a resume(), a read(0)) until startReading: the native relay reads it meanwhile.
 */
export function stopReading(handle: RawHandle): void {
  handle.reading = false;
  handle.readStop();
  handle.readStart = () => 0;
}

/** Node reads the handle again (`now`: the socket is still open). */
export function startReading(handle: RawHandle, now: boolean): void {
  delete (handle as Partial<RawHandle>).readStart; // the prototype's own again
  if (!now) return;
  handle.reading = true;
  handle.readStart();
}

/** More whole messages than this waiting to be handled: the client's socket is paused until they are. */
const MAX_QUEUED = 64;

export class ClientSocket {
  readonly duplex: WebDuplex;
  private mode: 'gateway' | 'switching' | 'direct' = 'gateway';
  private readonly pending: Buffer[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private handler: ((message: Uint8Array) => Promise<boolean>) | undefined;
  /** Takes a message at once when it can (true), before `handler` would. */
  private fast: ((message: Uint8Array) => boolean) | undefined;
  /** Bytes of a message not yet whole. */
  private partial: Buffer | undefined;
  private readonly queue: Uint8Array[] = [];
  private running = false;
  private corked = false;
  private paused = false;
  /** The native relay has the socket (nativeRelay.ts): nothing is read here, and a write takes it back first. */
  private suspended = false;
  /** Takes the socket back from the native relay (synchronously) before the guard writes to it. */
  reclaim: (() => void) | undefined;

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      if (this.mode === 'direct') return this.cut(chunk);
      this.pending.push(chunk);
      this.wake?.();
    });
    const close = () => {
      this.ended = true;
      this.wake?.();
      try {
        this.controller?.close();
      } catch {
        // Closed already.
      }
    };
    socket.on('end', close);
    socket.on('close', close);
    this.duplex = {
      readable: new ReadableStream<Uint8Array>(
        {
          start: (controller) => void (this.controller = controller),
          pull: (controller) => this.pull(controller),
        },
        { highWaterMark: 0 },
      ),
      writable: new WritableStream<Uint8Array>({
        write: (chunk) =>
          new Promise<void>((resolve, reject) => socket.write(chunk, (error) => (error ? reject(error) : resolve()))),
        close: () => new Promise<void>((resolve) => socket.end(resolve)),
        abort: () => void socket.destroy(),
      }),
    };
  }

  /** True once the guard reads and writes the socket itself. */
  get direct(): boolean {
    return this.mode === 'direct';
  }

  /**
   * From authentication on (plain TCP only): every later message goes to `handler`, one at a time, in order;
   * it answers false to stop reading (the connection ends). `fast` is asked first, in the same order: a message it
   * handles at once (true) costs no promise.
   */
  takeOver(handler: (message: Uint8Array) => Promise<boolean>, fast?: (message: Uint8Array) => boolean): void {
    this.handler = handler;
    this.fast = fast;
    this.mode = 'switching';
  }

  /** Bytes to the client; false when the socket's buffer is full (wait for `drained`). */
  write(bytes: Uint8Array): boolean {
    if (this.suspended) this.reclaim?.();
    if (!this.corked) {
      // Everything answered in one turn of the event loop goes out in one write.
      this.corked = true;
      this.socket.cork();
      process.nextTick(this.uncork);
    }
    return this.socket.write(bytes);
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.socket.uncork();
  };

  /**
   * The socket's descriptor when the guard holds it and has nothing of its own in it (every message handled, every
   * byte written), so that the native relay may take it; else undefined.
   */
  get quietFd(): number | undefined {
    if (this.mode !== 'direct' || this.suspended || this.running || this.paused || !this.handler) return undefined;
    if (this.queue.length > 0 || this.partial || this.corked) return undefined;
    if (this.socket.destroyed || this.socket.writableLength > 0 || this.ended) return undefined;
    const fd = rawHandle(this.socket)?.fd;
    return typeof fd === 'number' && fd >= 0 ? fd : undefined;
  }

  /** The native relay reads the socket from now on: Node's own reading stops. */
  suspend(): void {
    this.suspended = true;
    const handle = rawHandle(this.socket);
    if (handle) stopReading(handle);
  }

  /** Back from the native relay: what it had not written goes first (`unsent`), then reading again. */
  restoreWrites(unsent: Buffer): void {
    this.suspended = false;
    if (unsent.length > 0) this.write(unsent);
  }

  /** Reading again, beginning with the bytes the native relay had read but not passed on. */
  resume(unread: Buffer): void {
    this.suspended = false;
    const handle = rawHandle(this.socket);
    if (handle) startReading(handle, !this.socket.destroyed);
    if (unread.length > 0) this.cut(unread);
  }

  drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  private async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    if (this.mode === 'switching') {
      // pg-gateway handled all it had: what came since, and all that comes, is the guard's.
      this.mode = 'direct';
      for (const chunk of this.pending.splice(0)) this.cut(chunk);
      return new Promise<void>(() => undefined);
    }
    while (this.pending.length === 0 && !this.ended) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    const chunk = this.pending.shift();
    if (chunk) controller.enqueue(chunk);
    else if (this.ended) controller.close();
  }

  /** Whole messages out of the bytes that came (type byte, then a length that counts itself). */
  private cut(chunk: Buffer): void {
    const bytes = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    this.partial = undefined;
    let offset = 0;
    while (bytes.length - offset >= 5) {
      // A length under 4 is malformed: its 5 header bytes go as the message, which the session refuses (FATAL).
      const length = Math.max(bytes.readUInt32BE(offset + 1), 4);
      if (bytes.length - offset < length + 1) break;
      this.queue.push(bytes.subarray(offset, offset + length + 1));
      offset += length + 1;
    }
    if (offset < bytes.length) this.partial = Buffer.from(bytes.subarray(offset));
    if (this.queue.length > MAX_QUEUED && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    if (this.running || !this.handler) return;
    try {
      // What the fast path takes at once costs no promise; the rest goes through drain, in order.
      while (this.queue.length > 0 && this.fast?.(this.queue[0]!)) this.queue.shift();
    } catch {
      // An error on this client's path closes this client, never the guard.
      this.queue.length = 0;
      this.socket.destroy();
      return;
    }
    if (this.queue.length > 0 || this.paused) this.drain().catch(() => this.socket.destroy());
  }

  private async drain(): Promise<void> {
    if (this.running || !this.handler) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const message = this.queue.shift()!;
        if (this.fast?.(message)) continue;
        if (!(await this.handler(message))) {
          this.queue.length = 0;
          this.handler = undefined;
          return;
        }
      }
      if (this.paused) {
        this.paused = false;
        this.socket.resume();
      }
    } finally {
      this.running = false;
    }
  }
}

/**
 * A client's upstream session in a transaction pool: to the client's session (session/clientSession.ts) it
 * is an UpstreamSession like a session of its own, but it borrows one of the pool's sessions when the client
 * sends something and gives it back once that session is out of any transaction with nothing owed (the end
 * of a transaction, or of a single statement outside one).
 *
 * On the session it gets, before the client's first message there: the client's pooled settings
 * (sessionState.ts), and, on demand, each prepared statement the client uses and that session lacks (parsed
 * again under the pool's name for its text, as PgBouncer 1.21+ does: a client's "P_1" is `pa_<hash>` on
 * the server, shared by every client that prepared the same text). A client whose session holds state that
 * cannot move (LISTEN, a cursor WITH HOLD, a session advisory lock, a temporary table) keeps it: pinned, and told
 * so with a NOTICE, until that state is gone.
 */
import { createHash } from 'node:crypto';
import { Writer } from 'pg-protocol/dist/buffer-writer';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import type { UpstreamSession } from '../session/upstream';
import { closeComplete, commandComplete, errorResponse, parseComplete, readyForQuery } from '../wire/backendMessages';
import { ABORTED } from '../hold/heldMessages';
import type { PoolClient, PoolServer } from './poolServer';
import { frontendMessages, readParse, renamed, statementName, statementNameAt } from './poolMessages';
import type { SessionTouch } from '../judge/sessionTouch';
import { MAY_TOUCH_ALL } from '../judge/sessionTouch';
import { applySettingsSql, readSessionState, SESSION_STATE_SQL } from './sessionState';

/** What a pooled client asks of its pool (upstreamPool.ts). */
export interface PoolPort {
  tryAcquire(): PoolServer | undefined;
  acquire(): Promise<PoolServer>;
  release(server: PoolServer): void;
  discard(server: PoolServer): void;
  /** Pinned sessions change (for the timeout's message). */
  pinned(delta: number): void;
}

/** Most statements the pool keeps prepared on one server session before it closes the oldest. */
const MAX_PREPARED = 250;

const FLUSH = 0x48;
const SYNC = 0x53;

export class PooledUpstream implements UpstreamSession, PoolClient {
  private server: PoolServer | undefined;
  private acquiring = false;
  /** The client's messages not sent yet; a Query's or a Parse's with what the judge read it may do to the session. */
  private readonly outbox: { message: Buffer; touch?: SessionTouch }[] = [];
  private chunkHandler: (chunk: Buffer, messages: BackendMessage[]) => void = () => undefined;
  private closeHandler: ((error?: Error) => void) | undefined;
  private closed = false;
  private closeError: Error | undefined;
  private paused = false;
  /** The client's prepared statements by its own names: the pool's name and the Parse to send again. */
  private readonly statements = new Map<string, { serverName: string; parse: Buffer }>();
  private unnamed: { key: string; parse: Buffer } | undefined;
  /** This binding sent text that may have changed a setting, or left state that pins the session. */
  private maySet = false;
  private mayPin = false;
  private checking = false;
  private pins: string[] = [];

  constructor(
    private readonly pool: PoolPort,
    readonly parameters: [string, string][],
    /** The pooled settings this client has (start-up parameters, then what it SET). */
    private settings: Map<string, string>,
  ) {}

  get processId(): number {
    return this.server?.processId ?? 0;
  }

  get secretKey(): number {
    return this.server?.secretKey ?? 0;
  }

  send(bytes: Uint8Array, touch?: SessionTouch): void {
    if (this.closed) return;
    for (const message of frontendMessages(bytes)) this.outbox.push({ message, ...(touch ? { touch } : {}) });
    this.pump();
  }

  onChunk(handler: (chunk: Buffer, messages: BackendMessage[]) => void): void {
    this.chunkHandler = handler;
  }

  onClose(handler: (error?: Error) => void): void {
    this.closeHandler = handler;
    if (this.closed && this.closeError) handler(this.closeError);
  }

  pause(): void {
    this.paused = true;
    this.server?.pause();
  }

  resume(): void {
    this.paused = false;
    this.server?.resume();
  }

  /** The client is gone: an idle session goes back to the pool, one in the middle of anything is closed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.outbox.length = 0;
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.client = undefined;
    if (this.pins.length > 0) this.pool.pinned(-1);
    if (server.busy || this.pins.length > 0 || this.checking) this.pool.discard(server);
    else this.giveBack(server);
  }

  deliver(bytes: Buffer, messages: BackendMessage[]): void {
    this.chunkHandler(bytes, messages);
  }

  serverIdle(): void {
    const server = this.server;
    if (!server || this.checking || this.outbox.length > 0) return;
    if (this.maySet || this.mayPin) {
      this.maySet = this.mayPin = false;
      this.checking = true;
      server.ask(SESSION_STATE_SQL, (answer) => {
        this.checking = false;
        // The server calls serverIdle again once this chunk is handled, if nothing else is owed by then.
        const row = answer.rows[answer.rows.length - 1];
        return !answer.error && row ? this.sessionState(server, row) : undefined;
      });
      return;
    }
    if (this.pins.length > 0) return;
    this.server = undefined;
    server.client = undefined;
    this.giveBack(server);
  }

  serverClosed(error?: Error): void {
    this.server = undefined;
    if (this.pins.length > 0) this.pool.pinned(-1);
    this.pins = [];
    this.closed = true;
    this.closeError = error ?? new Error('the upstream session ended');
    this.closeHandler?.(this.closeError);
  }

  private giveBack(server: PoolServer): void {
    if (this.paused) server.resume();
    this.pool.release(server);
  }

  /** The settings read back, and whether the session is pinned now (a NOTICE for the client when it becomes so). */
  private sessionState(
    server: PoolServer,
    row: readonly (string | null)[],
  ): { bytes: Buffer; message: BackendMessage } | undefined {
    const state = readSessionState(row);
    this.settings = state.settings;
    server.settings = new Map(state.settings);
    const was = this.pins.length > 0;
    this.pins = state.pins;
    if (was !== this.pins.length > 0) this.pool.pinned(was ? -1 : 1);
    if (was || this.pins.length === 0) return undefined;
    return {
      bytes: notice(
        `the guard keeps this client on one upstream session of its pool while it holds ${this.pins.join(', ')}: no other client uses that session until this state is gone or the client disconnects (pg-agent guard --pool session gives every client its own)`,
      ),
      message: { name: 'notice', length: 0 },
    };
  }

  private pump(): void {
    if (!this.server) {
      // Nothing to borrow a session for: a Flush with nothing owed, a Sync with no batch (the client is idle).
      while (this.outbox.length > 0 && (this.outbox[0]!.message[0] === FLUSH || this.outbox[0]!.message[0] === SYNC)) {
        if (this.outbox.shift()!.message[0] === SYNC)
          queueMicrotask(() =>
            this.deliver(readyForQuery('I'), [{ name: 'readyForQuery', length: 5, status: 'I' } as BackendMessage]),
          );
      }
      if (this.outbox.length === 0 || this.acquiring) return;
      const idle = this.pool.tryAcquire();
      if (idle) this.attach(idle);
      else {
        this.acquiring = true;
        this.pool.acquire().then(
          (server) => {
            this.acquiring = false;
            if (this.closed) return this.pool.release(server);
            this.attach(server);
            this.pump();
          },
          (error: unknown) => this.fail(error),
        );
        return;
      }
    }
    const server = this.server!;
    while (this.outbox.length > 0 && this.server === server) {
      const { message, touch } = this.outbox.shift()!;
      this.forward(server, message, touch ?? MAY_TOUCH_ALL);
    }
  }

  private attach(server: PoolServer): void {
    this.server = server;
    server.client = this;
    if (this.paused) server.pause();
    const sql = applySettingsSql(this.settings, server.settings);
    if (!sql) return;
    server.settings = new Map(this.settings);
    void server.query(sql).then((answer) => {
      if (answer.error)
        this.fail(new Error(`the guard could not apply this client's settings: ${answer.error.message}`));
    });
  }

  /** No session came in time (or none could be opened): the client gets a FATAL and is closed, as PgBouncer does. */
  private fail(error: unknown): void {
    this.acquiring = false;
    if (this.closed) return;
    const server = this.server;
    if (server) {
      this.server = undefined;
      server.client = undefined;
      this.pool.discard(server);
    }
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: string }).code ?? '08006';
    this.deliver(errorResponse({ severity: 'FATAL', code, message }), [
      { name: 'error', length: 0, message, code, severity: 'FATAL' } as unknown as BackendMessage,
    ]);
    this.outbox.length = 0;
    this.closed = true;
    this.closeError = new Error(message);
    // After the FATAL is written (the client's socket uncorks at the next tick).
    setImmediate(() => this.closeHandler?.(this.closeError));
  }

  /** `touch`: what the judge read the message's statements may do to the session (a Query's, a Parse's). */
  private forward(server: PoolServer, message: Buffer, touch: SessionTouch): void {
    const type = message[0];
    if (type === 0x51) {
      this.watch(touch);
      const own = touch.deallocatesOne === undefined ? undefined : this.statements.get(touch.deallocatesOne);
      if (own) return this.deallocate(server, touch.deallocatesOne!, own);
      // Another name (the pool's own, even): the server forgets it, and so does the pool's list of that session.
      if (touch.deallocatesOne !== undefined) server.prepared.delete(touch.deallocatesOne);
      if (touch.deallocatesAll) {
        server.prepared.clear();
        this.statements.clear();
      }
      server.unnamedKey = undefined;
      return server.send(message);
    }
    if (type === 0x50) {
      this.watch(touch);
      return this.parse(server, message);
    }
    const at = statementNameAt(message);
    if (at === undefined) return server.send(message);
    const name = statementName(message, at);
    if (name === '') {
      if (type !== 0x43) this.ensureUnnamed(server);
      return server.send(message);
    }
    const statement = this.statements.get(name);
    if (type === 0x43) {
      // The server's statement may serve other clients: only the client's name goes.
      this.statements.delete(name);
      return server.synthetic(closeComplete(), { name: 'closeComplete', length: 4 });
    }
    // A name never prepared: the server answers as it would (prepared statement does not exist).
    if (!statement) return server.send(message);
    const state = server.prepared.get(statement.serverName);
    // Most recently used last: the oldest is closed first when the session has too many.
    server.prepared.delete(statement.serverName);
    server.prepared.set(statement.serverName, state ?? 'pending');
    if (!state) server.ownParse(renamed(statement.parse, 5, statement.serverName), statement.serverName);
    server.send(renamed(message, at, statement.serverName));
  }

  private parse(server: PoolServer, message: Buffer): void {
    const { name, key } = readParse(message);
    if (name === '') {
      this.unnamed = { key, parse: message };
      server.unnamedKey = key;
      return server.send(message);
    }
    const serverName = `pa_${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
    this.statements.set(name, { serverName, parse: message });
    if (server.prepared.has(serverName)) {
      // Prepared here already (by this client or another one with the same text): answered in its place.
      server.prepared.delete(serverName);
      server.prepared.set(serverName, 'ready');
      return server.synthetic(parseComplete(), { name: 'parseComplete', length: 4 });
    }
    if (server.prepared.size >= MAX_PREPARED) {
      const oldest = [...server.prepared].find(([, state]) => state === 'ready')?.[0];
      if (oldest) server.ownClose(oldest);
    }
    server.prepared.set(serverName, 'pending');
    server.send(renamed(message, 5, serverName), serverName);
  }

  /**
   * `DEALLOCATE name` of a statement the client prepared in the protocol: the server holds it under the pool's
   * name, maybe for other clients too, so the client's name goes and the pool answers as the server would
   * (in an aborted transaction, the server's refusal, and the name stays).
   */
  private deallocate(server: PoolServer, name: string, statement: { serverName: string; parse: Buffer }): void {
    this.statements.delete(name);
    server.answerInPlace((status) => {
      if (status === 'E') {
        if (!this.statements.has(name)) this.statements.set(name, statement);
        return {
          bytes: Buffer.concat([errorResponse(ABORTED), readyForQuery('E')]),
          messages: [
            { name: 'error', length: 0, ...ABORTED, severity: 'ERROR' } as unknown as BackendMessage,
            { name: 'readyForQuery', length: 5, status: 'E' } as BackendMessage,
          ],
        };
      }
      return {
        bytes: Buffer.concat([commandComplete('DEALLOCATE'), readyForQuery(status)]),
        messages: [
          { name: 'commandComplete', length: 0, text: 'DEALLOCATE' } as BackendMessage,
          { name: 'readyForQuery', length: 5, status } as BackendMessage,
        ],
      };
    });
  }

  /** The unnamed statement outlives a Sync: a Bind to it on another session parses it there first. */
  private ensureUnnamed(server: PoolServer): void {
    if (!this.unnamed || server.unnamedKey === this.unnamed.key) return;
    server.ownParse(this.unnamed.parse);
    server.unnamedKey = this.unnamed.key;
  }

  /** A statement that may change a setting or pin the session: both read back once the session is idle again. */
  private watch(touch: SessionTouch): void {
    if (touch.sets) this.maySet = true;
    if (touch.pins) this.mayPin = true;
  }
}

function notice(message: string): Buffer {
  return new Writer()
    .addCString('SNOTICE')
    .addCString('VNOTICE')
    .addCString('C00000')
    .addCString(`M${message}`)
    .add(Buffer.from([0]))
    .flush(0x4e);
}

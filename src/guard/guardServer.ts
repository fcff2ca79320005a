/**
 * `pg-agent guard`'s endpoint: a PostgreSQL protocol v3 server (pg-gateway: SSLRequest and TLS, start-up,
 * SCRAM-SHA-256 against the guard's users) in front of one upstream database. After authentication each
 * client gets its own upstream session (opened with the credentials only the guard holds), its
 * ParameterStatus, and a BackendKeyData of the guard's own, which a CancelRequest maps back to the upstream
 * session's key (Ctrl-C in psql cancels the upstream query). Every later message goes to ClientSession.
 */
import { randomInt } from 'node:crypto';
import net from 'node:net';
import { BackendError } from 'pg-gateway';
import type { PostgresConnection } from 'pg-gateway';
import { fromDuplexStream } from 'pg-gateway/node';
import { serialize } from 'pg-protocol';
import type { Db } from '../core/db/db';
import { ClientSession } from './session/clientSession';
import { ClientSocket } from './session/clientSocket';
import type { GuardContext } from './guardContext';
import type { GuardUsers } from './guardUsers';
import type { ClientEvents, GuardEvents } from './metrics/guardEvents';
import { checkStartup } from './session/startupParameters';
import type { UpstreamPool } from './pool/upstreamPool';
import type { UpstreamSession } from './session/upstream';
import { openUpstream } from './session/upstream';
import { backendKeyData, errorResponse, parameterStatus } from './wire/backendMessages';
import { initialMessageKind } from './wire/initialMessage';
import { boundUnreadBytes } from './wire/messageBound';

export interface GuardClientInfo {
  id: number;
  user: string;
  application: string;
  since: string;
  /** Tickets this client's statements wait on. */
  held: string[];
  /** `--hold wait`: the client is kept waiting on this ticket's decision, since then. */
  waiting?: { ticket: string; since: string };
}

export interface RunningGuard {
  host: string;
  port: number;
  clients(): GuardClientInfo[];
  /** Upstream sessions open for clients now (--metrics). */
  upstreamSessions(): number;
  /** Called whenever clients come, go or get a statement held (the status file follows it). */
  onChange(listener: () => void): void;
  close(): Promise<void>;
}

export interface GuardServerOptions {
  context: GuardContext;
  db: Db;
  users: GuardUsers;
  host: string;
  port: number;
  tls?: { key: ArrayBuffer; cert: ArrayBuffer };
  /** A client not through start-up and authentication by then is closed (PostgreSQL's authentication_timeout, 1 min). */
  startupTimeoutMs?: number;
  /** `--pool transaction`: the upstream sessions every client shares (pool/); absent, each client has its own. */
  pool?: UpstreamPool;
  /** --metrics and --log-format json: each client's session and statements (metrics/guardEvents.ts). */
  events?: GuardEvents;
}

/** PostgreSQL's answer to a GSSENCRequest when it offers no GSSAPI encryption. */
const GSSENC_REFUSED = new Uint8Array([0x4e]);
/**
 * The answer to a message the session handled itself (it writes its own bytes): no bytes, yet "handled",
 * which pg-gateway reads from an iterable's return value. (An empty Uint8Array would be handled too, but
 * pg-gateway writes it: one empty socket write, a system call, per client message.)
 */
const HANDLED: Iterable<Uint8Array> = {
  [Symbol.iterator]: (): Iterator<Uint8Array, true> => ({ next: () => ({ done: true, value: true }) }),
};

export async function startGuard(options: GuardServerOptions): Promise<RunningGuard> {
  const { context } = options;
  const clients = new Map<
    number,
    {
      info: GuardClientInfo;
      upstream?: UpstreamSession;
      session?: ClientSession;
      keys: { processId: number; secretKey: number };
      /** The guard stops: a FATAL of its own to the client, then the connection ends (resolved once closed). */
      farewell?: () => Promise<void>;
    }
  >();
  let nextId = 1;
  const awaiting = new Map<string, string>();
  let listener: () => void = () => undefined;
  const changed = () => listener();

  const cancel = (data: Uint8Array) => {
    const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const processId = view.readInt32BE(8);
    const secretKey = view.readInt32BE(12);
    const client = [...clients.values()].find((c) => c.keys.processId === processId && c.keys.secretKey === secretKey);
    // A held statement (its wait with --hold wait) never reached the upstream: the cancel ends it in the guard.
    if (client?.session?.held.cancel()) return;
    const target = client?.upstream;
    if (!target) return;
    const socket = net.connect({ host: context.upstream.host, port: context.upstream.port }, () =>
      socket.end(serialize.cancel(target.processId, target.secretKey)),
    );
    socket.on('error', (error) =>
      context.logger.warn('guard could not forward a cancel request', { error: error.message }),
    );
  };

  const accept = async (socket: net.Socket) => {
    const id = nextId++;
    const keys = { processId: randomInt(1, 2 ** 31 - 1), secretKey: randomInt(1, 2 ** 31 - 1) };
    const entry: {
      info: GuardClientInfo;
      upstream?: UpstreamSession;
      session?: ClientSession;
      keys: typeof keys;
      farewell?: () => Promise<void>;
    } = {
      info: { id, user: '', application: '', since: new Date().toISOString(), held: [] },
      keys,
    };
    let session: ClientSession | undefined;
    let observed: ClientEvents | undefined;
    /** One client message through the session, timed and counted for --metrics and the log. */
    const handle = async (message: Uint8Array) => {
      observed?.statements.begin();
      const outcome = await session!.handle(message);
      observed?.statements.end(message[0]);
      return outcome;
    };
    let forwarded: Record<string, string> = {};
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    // A socket that never finishes start-up (sends nothing, or half a packet) holds no descriptor for ever.
    const startupTimer = setTimeout(
      () => session === undefined && socket.destroy(),
      options.startupTimeoutMs ?? 60_000,
    ).unref();
    socket.on('close', () => {
      clearTimeout(startupTimer);
      session?.end();
      observed?.end();
      entry.upstream?.close();
      if (clients.delete(id)) changed();
    });
    const holder: { connection?: PostgresConnection } = {};
    const wire = new ClientSocket(socket);
    // On the guard's own socket a write is done when it returns (no promise on the hot path); through pg-gateway it is awaited.
    const write = (bytes: Uint8Array): Promise<void> | void => {
      if (wire.direct) {
        // The client reads slower than the upstream sends: stop reading the upstream until it catches up.
        if (!wire.write(bytes) && entry.upstream) {
          const upstream = entry.upstream;
          upstream.pause();
          void wire.drained().then(() => upstream.resume());
        }
        return;
      }
      return writeThroughGateway(bytes);
    };
    const writeThroughGateway = async (bytes: Uint8Array) => {
      const writer = holder.connection?.streamWriter;
      if (!writer) return;
      const written = writer.write(bytes);
      // A client gone since (its Terminate released the writer): the write fails, and so does desiredSize below.
      written.catch(() => undefined);
      // The client reads slower than the upstream sends: stop reading the upstream until it catches up.
      if ((writer.desiredSize ?? 1) <= 0 && entry.upstream) {
        entry.upstream.pause();
        void writer.ready.then(
          () => entry.upstream?.resume(),
          () => undefined,
        );
      }
      await written;
    };
    holder.connection = await fromDuplexStream(wire.duplex, {
      auth: { method: 'scram-sha-256', getScramSha256Data: ({ username }) => options.users.verifier(username) },
      ...(options.tls ? { tls: options.tls } : {}),
      onStartup: (state) => {
        const checked = checkStartup(state.clientParams ?? { user: '' }, context.upstream.database);
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- pg-gateway sends a thrown BackendError (not an Error) as the client's FATAL
        if (checked instanceof BackendError) throw checked;
        forwarded = checked;
      },
      onAuthenticated: async (state) => {
        const user = state.clientParams?.user ?? '?';
        try {
          entry.upstream = await (options.pool
            ? options.pool.connect(forwarded)
            : openUpstream(context.upstream, forwarded));
        } catch (error) {
          context.logger.warn('guard could not open an upstream session', { user, error: String(error) });
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- pg-gateway sends a thrown BackendError (not an Error) as the client's FATAL
          throw BackendError.create({
            severity: 'FATAL',
            code: '08006',
            message: `the guard cannot reach its database now: ${error instanceof Error ? error.message : String(error)}`,
          });
        }
        const upstream = entry.upstream;
        // Read at each connection: a role given or taken applies from the user's next connection.
        const role = await options.users.role(user);
        for (const [name, value] of upstream.parameters) await write(parameterStatus(name, value));
        await write(backendKeyData(keys.processId, keys.secretKey));
        entry.info = { ...entry.info, user, application: forwarded.application_name ?? '' };
        session = new ClientSession(
          context,
          options.db,
          upstream,
          user,
          write,
          {
            awaiting,
            held: (ticket) => {
              observed?.statements.held(ticket);
              if (!entry.info.held.includes(ticket)) entry.info.held.push(ticket);
              changed();
            },
            executed: (ticket) => observed?.statements.executed(ticket),
            judged: (kind) => observed?.statements.judged(kind),
            waiting: (ticket) => {
              if (ticket) entry.info.waiting = { ticket, since: new Date().toISOString() };
              else delete entry.info.waiting;
              changed();
            },
          },
          role,
        );
        entry.session = session;
        entry.farewell = () => stopping(socket, wire);
        observed = options.events?.client({ id, user, address: `${socket.remoteAddress}:${socket.remotePort}` });
        upstream.onClose(() => socket.destroy());
        clients.set(id, entry);
        changed();
        context.logger.info('guard client connected', { client: id, user });
        // Plain TCP: from here the guard reads and writes the socket itself (clientSocket.ts).
        if (!state.tlsInfo) {
          // A session of its own may lend both sockets to the native relay while it is quiet (session/nativeRelay.ts).
          session.useNative(wire);
          wire.takeOver(
            async (message) => {
              unread.handed();
              const outcome = await handle(message);
              if (outcome === undefined) return true;
              socket.end();
              return false;
            },
            (message) => {
              if (!session!.passFast(message)) return false;
              unread.handed();
              observed?.statements.begin();
              observed?.statements.end(message[0]);
              return true;
            },
          );
        }
      },
      onMessage: async (data, state) => {
        unread.handed();
        if (!state.isAuthenticated) {
          if (state.step !== 'AwaitingInitialMessage') return undefined;
          const initial = initialMessageKind(data);
          if (initial === 'cancel') {
            cancel(data);
            await holder.connection?.detach();
            socket.destroy();
          }
          if (initial === 'gssenc') return GSSENC_REFUSED;
          if (initial === 'invalid') {
            await holder.connection?.detach();
            const close = () => socket.destroy();
            socket.end(errorResponse({ severity: 'FATAL', code: '08P01', message: 'invalid startup packet' }), close);
            setTimeout(close, 1000).unref();
            return HANDLED;
          }
          return undefined;
        }
        if (!session) return undefined;
        const outcome = await handle(data);
        if (outcome === 'terminate') return undefined; // pg-gateway's own Terminate handling closes the connection
        if (outcome === 'close') {
          await holder.connection?.detach();
          socket.end();
          return undefined;
        }
        return HANDLED;
      },
    });
    // A declared length that lies: FATAL 08P01 and closed (the answer is given a second at most) instead of buffered.
    const unread = boundUnreadBytes(
      socket,
      () => session !== undefined,
      (limit) => {
        const close = () => socket.destroy();
        setTimeout(close, 1000).unref();
        Promise.resolve(
          write(
            errorResponse({
              severity: 'FATAL',
              code: '08P01',
              message: `invalid message length: the guard reads no message over ${limit} bytes`,
            }),
          ),
        ).then(close, close);
      },
    );
  };

  // Every socket, authenticated or not yet: closing the guard ends them all (server.close waits for each).
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    accept(socket).catch((error: unknown) => {
      context.logger.warn('guard client failed', { error: String(error) });
      socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    host: address.address,
    port: address.port,
    clients: () =>
      [...clients.values()].map((c) => ({
        ...c.info,
        held: [...c.info.held],
        ...(c.info.waiting ? { waiting: { ...c.info.waiting } } : {}),
      })),
    upstreamSessions: () => [...clients.values()].filter((c) => c.upstream).length,
    onChange: (l) => (listener = l),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Clients told why (57P01, as PostgreSQL's own shutdown says it), within a second; then every socket ends.
      await Promise.all([...clients.values()].map((c) => c.farewell?.() ?? Promise.resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/**
 * The guard stops (SIGINT, SIGTERM): a plain-TCP client gets FATAL 57P01 before its connection ends, as from a
 * PostgreSQL server shutting down (a `--hold wait` client learns why its wait ended); at most a second is given.
 */
function stopping(socket: net.Socket, wire: ClientSocket): Promise<void> {
  if (!wire.direct || socket.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, 1000);
    socket.once('close', done);
    socket.end(
      errorResponse({
        severity: 'FATAL',
        code: '57P01',
        message: 'terminating connection because the guard is shutting down',
        hint: 'Connect again: held statements keep their tickets, and the identical statement finds its ticket.',
      }),
    );
  });
}

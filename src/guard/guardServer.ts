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
import { fromNodeSocket } from 'pg-gateway/node';
import { serialize } from 'pg-protocol';
import type { Db } from '../core/db/db';
import { ClientSession } from './clientSession';
import type { GuardContext } from './guardContext';
import type { GuardUsers } from './guardUsers';
import { checkStartup } from './startupParameters';
import type { UpstreamSession } from './upstream';
import { openUpstream } from './upstream';
import { backendKeyData, parameterStatus } from './wire/backendMessages';

export interface GuardClientInfo {
  id: number;
  user: string;
  application: string;
  since: string;
  /** Tickets this client's statements wait on. */
  held: string[];
}

export interface RunningGuard {
  host: string;
  port: number;
  clients(): GuardClientInfo[];
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
}

const CANCEL_REQUEST_CODE = 80877102;
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
  const clients = new Map<number, { info: GuardClientInfo; upstream?: UpstreamSession; socket: net.Socket; keys: { processId: number; secretKey: number } }>();
  let nextId = 1;
  const awaiting = new Set<string>();
  let listener: () => void = () => undefined;
  const changed = () => listener();

  const cancel = (data: Uint8Array) => {
    const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const processId = view.readInt32BE(8);
    const secretKey = view.readInt32BE(12);
    const target = [...clients.values()].find((c) => c.keys.processId === processId && c.keys.secretKey === secretKey)?.upstream;
    if (!target) return;
    const socket = net.connect({ host: context.upstream.host, port: context.upstream.port }, () => socket.end(serialize.cancel(target.processId, target.secretKey)));
    socket.on('error', (error) => context.logger.warn('guard could not forward a cancel request', { error: error.message }));
  };

  const accept = async (socket: net.Socket) => {
    const id = nextId++;
    const keys = { processId: randomInt(1, 2 ** 31 - 1), secretKey: randomInt(1, 2 ** 31 - 1) };
    const entry: { info: GuardClientInfo; upstream?: UpstreamSession; socket: net.Socket; keys: typeof keys } = {
      info: { id, user: '', application: '', since: new Date().toISOString(), held: [] },
      socket,
      keys,
    };
    let session: ClientSession | undefined;
    let forwarded: Record<string, string> = {};
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      session?.end();
      entry.upstream?.close();
      if (clients.delete(id)) changed();
    });
    const holder: { connection?: PostgresConnection } = {};
    const write = async (bytes: Uint8Array) => {
      const writer = holder.connection?.streamWriter;
      if (!writer) return;
      const written = writer.write(bytes);
      // The client reads slower than the upstream sends: stop reading the upstream until it catches up.
      if ((writer.desiredSize ?? 1) <= 0 && entry.upstream) {
        entry.upstream.pause();
        void writer.ready.then(() => entry.upstream?.resume(), () => undefined);
      }
      await written;
    };
    holder.connection = await fromNodeSocket(socket, {
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
          entry.upstream = await openUpstream(context.upstream, forwarded);
        } catch (error) {
          context.logger.warn('guard could not open an upstream session', { user, error: String(error) });
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- pg-gateway sends a thrown BackendError (not an Error) as the client's FATAL
          throw BackendError.create({ severity: 'FATAL', code: '08006', message: `the guard cannot reach its database now: ${error instanceof Error ? error.message : String(error)}` });
        }
        const upstream = entry.upstream;
        for (const [name, value] of upstream.parameters) await write(parameterStatus(name, value));
        await write(backendKeyData(keys.processId, keys.secretKey));
        entry.info = { ...entry.info, user, application: forwarded.application_name ?? '' };
        session = new ClientSession(context, options.db, upstream, user, write, {
          awaiting,
          held: (ticket) => {
            if (!entry.info.held.includes(ticket)) entry.info.held.push(ticket);
            changed();
          },
        });
        upstream.onClose(() => socket.destroy());
        clients.set(id, entry);
        changed();
        context.logger.info('guard client connected', { client: id, user });
      },
      onMessage: async (data, state) => {
        if (!state.isAuthenticated) {
          if (state.step === 'AwaitingInitialMessage' && isCancelRequest(data)) {
            cancel(data);
            await holder.connection?.detach();
            socket.destroy();
          }
          return undefined;
        }
        if (!session) return undefined;
        const outcome = await session.handle(data);
        if (outcome === 'terminate') return undefined; // pg-gateway's own Terminate handling closes the connection
        if (outcome === 'close') {
          await holder.connection?.detach();
          socket.end();
          return undefined;
        }
        return HANDLED;
      },
    });
  };

  const server = net.createServer((socket) => {
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
    clients: () => [...clients.values()].map((c) => ({ ...c.info, held: [...c.info.held] })),
    onChange: (l) => (listener = l),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const client of clients.values()) client.socket.destroy();
      await closed;
    },
  };
}

function isCancelRequest(data: Uint8Array): boolean {
  if (data.byteLength !== 16) return false;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return view.getInt32(0) === 16 && view.getInt32(4) === CANCEL_REQUEST_CODE;
}

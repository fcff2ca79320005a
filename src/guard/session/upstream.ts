/**
 * One client session's own connection to the upstream database. `pg` does the start-up (TLS per libpq's
 * sslmode, SCRAM or whatever the server asks) with the credentials only the guard holds; the guard then
 * takes over its socket: the upstream's bytes are relayed to the client as they come (rows are never
 * decoded and encoded again) while pg-protocol's Parser reads them alongside for what the guard must know
 * (ReadyForQuery and its transaction status).
 *
 * The session is read-only by default (`default_transaction_read_only=on`): the guard only ever sends it
 * statements it judged reads, and should the judgement miss a write, PostgreSQL itself refuses it.
 */
import type { Socket } from 'node:net';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import type { ServerTarget } from '../../core/db/connectionTarget';
import { sslOption } from '../../core/db/postgresDb';
import { AgentError } from '../../core/platform/errors';
import type { SessionTouch } from '../judge/sessionTouch';
import { BackendScanner } from '../wire/backendScan';
import { rawHandle } from './clientSocket';
import { startReading, stopReading } from './clientSocket';

export interface UpstreamSession {
  /** ParameterStatus values the server sent at start-up, in order. */
  parameters: [string, string][];
  processId: number;
  secretKey: number;
  /** `touch`: what the judge read a forwarded Query or Parse may do to the session (a transaction pool reads it). */
  send(bytes: Uint8Array, touch?: SessionTouch): void;
  /**
   * Each chunk the server sends, with the messages it completes (wire/backendScan.ts: named, and decoded in full
   * only where the guard reads them, or each one while `full()` says so).
   */
  onChunk(handler: (chunk: Buffer, messages: BackendMessage[]) => void, full?: () => boolean): void;
  onClose(handler: (error?: Error) => void): void;
  pause(): void;
  resume(): void;
  close(): void;
  /** A session of its own (not a pool's): its socket may be lent to the native relay (nativeRelay.ts). */
  native?: NativeSocket;
}

export interface NativeSocket {
  /** The descriptor, when nothing of the guard's is in flight on it (no bytes queued, unwritten or half-read). */
  quietFd(): number | undefined;
  /** The native relay reads it from now on; `reclaim` takes it back synchronously before the guard writes. */
  suspend(reclaim: () => void): void;
  /** Back: `unsent` goes first, then `unread` is handled as if it came now, then reading again. */
  resume(unread: Buffer, unsent: Buffer): void;
}

/** Start-up parameters a client may choose (output format and its own name); everything else is the guard's. */
export const FORWARDED_PARAMETERS = [
  'application_name',
  'DateStyle',
  'TimeZone',
  'IntervalStyle',
  'extra_float_digits',
] as const;

/** Messages of one turn up to this size are joined into one buffer; larger ones go as they are. */
const JOIN_BYTES = 16 * 1024;

export async function openUpstream(
  target: ServerTarget,
  clientParameters: Readonly<Record<string, string>>,
): Promise<UpstreamSession> {
  // Its host:port is the database as an SSH host sees it, and an IAM login needs a token: connecting
  // straight there would reach another database, or fail to log in. Not supported here yet: refused.
  if (target.ssh || target.iam) {
    throw new AgentError(
      'CONFIG_INVALID',
      `The guard cannot reach ${target.profile ?? target.host} yet: it goes through an SSH tunnel or logs in with an IAM token.`,
      'Point the guard at a database it reaches directly (--db URL), e.g. through your own ssh -L tunnel.',
    );
  }
  const settings = [
    // The server must read SQL text exactly as the guard's parser did (see core/db/postgresDb.ts).
    'standard_conforming_strings=on',
    'client_encoding=UTF8',
    'default_transaction_read_only=on',
    ...FORWARDED_PARAMETERS.filter((name) => name !== 'application_name' && clientParameters[name] !== undefined).map(
      (name) => `${name}=${clientParameters[name]!}`,
    ),
  ];
  const parameters: [string, string][] = [];
  const client = new pg.Client({
    host: target.host,
    port: target.port,
    database: target.database,
    user: target.user,
    password: target.password ?? '',
    ssl: sslOption(target),
    application_name: clientParameters.application_name ?? 'pg-agent guard',
    // libpq's options syntax: backslash escapes a space or a backslash inside a value.
    options: settings.map((s) => `-c ${s.replace(/[\\ ]/g, (c) => `\\${c}`)}`).join(' '),
    connectionTimeoutMillis: 10_000,
  });
  const connection = (
    client as unknown as {
      connection: {
        stream: Socket;
        on(event: string, handler: (message: { parameterName: string; parameterValue: string }) => void): void;
      };
    }
  ).connection;
  connection.on('parameterStatus', (message) => parameters.push([message.parameterName, message.parameterValue]));
  // A failure after the take-over arrives through the socket's own listeners below.
  client.on('error', () => undefined);
  await client.connect();
  const keys = client as unknown as { processID: number; secretKey: number };
  const socket = connection.stream;
  // pg's own parser stops here: from now on the bytes are the guard's to relay.
  socket.removeAllListeners('data');
  const scanner = new BackendScanner();
  let chunkHandler: (chunk: Buffer, messages: BackendMessage[]) => void = () => undefined;
  let fullNow: () => boolean = () => true;
  let closeHandler: (error?: Error) => void = () => undefined;
  let closed = false;
  let failure: Error | undefined;
  // What one turn of the event loop sends (the messages of one client batch: Parse, Bind, Describe, Execute,
  // Sync) goes out in one write at the end of the turn: one buffer as it is, several joined.
  let queued: Uint8Array[] = [];
  const flush = () => {
    const parts = queued;
    queued = [];
    if (closed || parts.length === 0) return;
    if (parts.length === 1) return void socket.write(parts[0]!);
    let size = 0;
    for (const part of parts) size += part.length;
    if (size <= JOIN_BYTES) return void socket.write(Buffer.concat(parts, size));
    // Large (COPY data): written as they are, in one writev.
    socket.cork();
    for (const part of parts) socket.write(part);
    socket.uncork();
  };
  socket.on('data', (chunk: Buffer) => {
    chunkHandler(chunk, scanner.scan(chunk, fullNow()));
  });
  let reclaim: (() => void) | undefined;
  const handle = () => rawHandle(socket);
  socket.on('error', (error) => (failure = error));
  socket.on('close', () => {
    closed = true;
    closeHandler(failure);
  });
  return {
    parameters,
    processId: keys.processID,
    secretKey: keys.secretKey,
    send: (bytes) => {
      if (reclaim) reclaim();
      if (closed) return;
      if (queued.push(bytes) === 1) process.nextTick(flush);
    },
    onChunk: (handler, full) => {
      chunkHandler = handler;
      fullNow = full ?? (() => true);
    },
    onClose: (handler) => {
      closeHandler = handler;
      if (closed) handler(failure);
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    native: {
      quietFd: () => {
        const fd = handle()?.fd;
        if (closed || reclaim || queued.length > 0 || socket.writableLength > 0 || !scanner.idle) return undefined;
        return typeof fd === 'number' && fd >= 0 ? fd : undefined;
      },
      suspend: (taken) => {
        reclaim = taken;
        const h = handle();
        if (h) stopReading(h);
      },
      resume: (unread, unsent) => {
        reclaim = undefined;
        if (unsent.length > 0 && !closed) socket.write(unsent);
        if (unread.length > 0) chunkHandler(unread, scanner.scan(unread, fullNow()));
        const h = handle();
        if (h) startReading(h, !socket.destroyed);
      },
    },
    close: () => {
      if (reclaim) reclaim();
      if (closed) return;
      // Terminate, then close: the server ends the session (and rolls back anything open) at once.
      flush();
      socket.end(serialize.end());
    },
  };
}

/**
 * How much a client may send before the guard has a whole message of it. pg-gateway buffers a message until
 * all the bytes its length declares have come, so a length that lies (2 GB) would grow the guard's memory
 * without end, before start-up too (no password needed). The guard counts the bytes that arrived since
 * pg-gateway last handed over a message; past the bound the client gets FATAL 08P01 and is closed, as
 * PostgreSQL answers an invalid message length.
 */
import type { Socket } from 'node:net';

/** Before start-up: PostgreSQL's start-up packet bound (10,000 bytes) with room for a TLS handshake. */
export const MAX_STARTUP_BYTES = 64 * 1024;
/** After start-up: a 10 MB statement passes; PostgreSQL's own 1 GB would be 1 GB of the guard's memory per client, and judging it (about 1 s of parsing per 10 MB, in which the guard answers no one) longer still. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface UnreadBytes {
  /** pg-gateway handed over a whole message. */
  handed(): void;
}

/** Watches `socket`; `overflow(limit)` is called once when a client sends more than the bound without ending a message. */
export function boundUnreadBytes(
  socket: Socket,
  started: () => boolean,
  overflow: (limit: number) => void,
): UnreadBytes {
  let unread = 0;
  let over = false;
  socket.on('data', (chunk: Buffer) => {
    unread += chunk.length;
    const limit = started() ? MAX_MESSAGE_BYTES : MAX_STARTUP_BYTES;
    if (over || unread <= limit) return;
    over = true;
    socket.pause();
    overflow(limit);
  });
  return { handed: () => (unread = 0) };
}

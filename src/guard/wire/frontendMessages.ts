/**
 * The client's messages after start-up (PostgreSQL protocol v3, frontend side), read field by field with
 * pg-protocol's BufferReader; pg-gateway has already cut the stream into whole messages. A message that
 * does not hold what its type says is a MalformedMessage: the session answers it with 08P01 and closes.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { BufferReader } from 'pg-protocol/dist/buffer-reader';

export type FrontendMessage =
  | { type: 'query'; sql: string }
  | { type: 'parse'; name: string; sql: string; paramTypes: number[] }
  | {
      type: 'bind';
      portal: string;
      statement: string;
      paramFormats: number[];
      params: (Buffer | null)[];
      resultFormats: number[];
    }
  | { type: 'execute'; portal: string; maxRows: number }
  | { type: 'describe'; target: 'S' | 'P'; name: string }
  | { type: 'close'; target: 'S' | 'P'; name: string }
  | { type: 'sync' }
  | { type: 'flush' }
  | { type: 'terminate' }
  | { type: 'copyData' }
  | { type: 'copyDone' }
  | { type: 'copyFail'; message: string }
  | { type: 'functionCall' }
  | { type: 'other'; code: number };

export class MalformedMessage extends Error {}

const QUERY = 0x51;

/**
 * The text of a well-formed simple Query whose text is ASCII (each byte its character, so it is exactly what
 * readFrontendMessage reads), or undefined (then readFrontendMessage reads it, or refuses it): the session's fast path.
 */
export function asciiQueryText(raw: Uint8Array): string | undefined {
  const n = raw.length;
  if (n < 6 || raw[0] !== QUERY || raw[n - 1] !== 0) return undefined;
  const buffer = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, n);
  if (buffer.readInt32BE(1) !== n - 1 || buffer.indexOf(0, 5) !== n - 1) return undefined;
  const text = buffer.subarray(5, n - 1);
  return isAscii(text) ? text.toString('latin1') : undefined;
}

/** One whole message: type byte, int32 length (itself included), body. */
export function readFrontendMessage(raw: Uint8Array): FrontendMessage {
  try {
    return readFields(raw);
  } catch (error) {
    // Buffer's own reads throw RangeError past the end: a field longer than its message.
    if (error instanceof RangeError) throw new MalformedMessage('a field runs past the end of its message');
    throw error;
  }
}

function readFields(raw: Uint8Array): FrontendMessage {
  const buffer = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (buffer.length < 5 || buffer.readInt32BE(1) !== buffer.length - 1)
    throw new MalformedMessage('the message length does not match its bytes');
  const reader = new BufferReader();
  reader.setBuffer(5, buffer);
  const code = buffer[0]!;
  const text = (): string => {
    const start = readerOffset(reader);
    const end = buffer.indexOf(0, start);
    if (end < 0) throw new MalformedMessage('a string field has no terminating zero byte');
    if (!isUtf8(buffer.subarray(start, end))) throw new MalformedMessage('a string field is not valid UTF-8');
    return reader.cstring();
  };
  const count = (): number => {
    const n = reader.int16();
    if (n < 0) throw new MalformedMessage('a count is negative');
    return n;
  };
  let message: FrontendMessage;
  switch (String.fromCharCode(code)) {
    case 'Q':
      message = { type: 'query', sql: text() };
      break;
    case 'P': {
      const name = text();
      const sql = text();
      const n = count();
      const paramTypes: number[] = [];
      for (let i = 0; i < n; i++) paramTypes.push(reader.uint32());
      message = { type: 'parse', name, sql, paramTypes };
      break;
    }
    case 'B': {
      const portal = text();
      const statement = text();
      const paramFormats: number[] = [];
      for (let i = 0, n = count(); i < n; i++) paramFormats.push(reader.int16());
      const params: (Buffer | null)[] = [];
      for (let i = 0, n = count(); i < n; i++) {
        const length = reader.int32();
        if (length < -1 || readerOffset(reader) + Math.max(length, 0) > buffer.length)
          throw new MalformedMessage('a parameter is longer than its message');
        params.push(length === -1 ? null : Buffer.from(reader.bytes(length)));
      }
      const resultFormats: number[] = [];
      for (let i = 0, n = count(); i < n; i++) resultFormats.push(reader.int16());
      message = { type: 'bind', portal, statement, paramFormats, params, resultFormats };
      break;
    }
    case 'E':
      message = { type: 'execute', portal: text(), maxRows: reader.int32() };
      break;
    case 'D':
    case 'C': {
      const target = String.fromCharCode(reader.byte());
      if (target !== 'S' && target !== 'P')
        throw new MalformedMessage(`"${target}" is neither S (statement) nor P (portal)`);
      message = { type: code === 0x44 ? 'describe' : 'close', target, name: text() };
      break;
    }
    case 'S':
      message = { type: 'sync' };
      break;
    case 'H':
      message = { type: 'flush' };
      break;
    case 'X':
      message = { type: 'terminate' };
      break;
    case 'd':
      return { type: 'copyData' };
    case 'c':
      message = { type: 'copyDone' };
      break;
    case 'f':
      message = { type: 'copyFail', message: text() };
      break;
    case 'F':
      return { type: 'functionCall' };
    default:
      return { type: 'other', code };
  }
  if (readerOffset(reader) !== buffer.length)
    throw new MalformedMessage(
      `the ${message.type} message has ${buffer.length - readerOffset(reader)} bytes more or less than its fields`,
    );
  return message;
}

/** BufferReader keeps its position in a public-at-runtime field that its typings call private. */
function readerOffset(reader: BufferReader): number {
  return (reader as unknown as { offset: number }).offset;
}

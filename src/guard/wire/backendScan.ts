/**
 * The upstream's messages as the guard reads them on its hot path: cut by their length without decoding what
 * the guard never reads. A read's answer (RowDescription, DataRow, CommandComplete, ReadyForQuery…) is relayed
 * as the upstream's own bytes, so all the guard needs of it is each message's name and ReadyForQuery's status;
 * pg-protocol's Parser decodes the rest (errors, notices, notifications, COPY responses, authentication) and,
 * when the session asks for it (`full`: a measured transaction records results, an in-band query or a Describe
 * of the guard's own waits for its rows), every message.
 */
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { Parser } from 'pg-protocol/dist/parser';

/** Messages whose name (and ReadyForQuery's status) is all the hot path reads: not decoded unless asked. */
const LIGHT: Record<number, BackendMessage['name']> = {
  0x31: 'parseComplete',
  0x32: 'bindComplete',
  0x33: 'closeComplete',
  0x6e: 'noData',
  0x73: 'portalSuspended',
  0x49: 'emptyQuery',
  0x63: 'copyDone',
  0x64: 'copyData',
  0x43: 'commandComplete',
  0x54: 'rowDescription',
  0x44: 'dataRow',
  0x74: 'parameterDescription',
  0x53: 'parameterStatus',
  0x4b: 'backendKeyData',
};
const READY = 0x5a;
const NONE: BackendMessage[] = [];

export class BackendScanner {
  /** Bytes of a message not yet whole, and how many bytes they must reach before a scan is worth it. */
  private pieces: Buffer[] = [];
  private have = 0;
  private need = 0;
  private readonly parser = new Parser();

  /** No bytes of a message not yet whole are kept. */
  get idle(): boolean {
    return this.pieces.length === 0;
  }

  /** The messages `chunk` completes, in order; `full`: every one decoded by pg-protocol. */
  scan(chunk: Buffer, full: boolean): BackendMessage[] {
    let bytes = chunk;
    if (this.pieces.length > 0) {
      this.pieces.push(chunk);
      this.have += chunk.length;
      // A long message (a wide row, a COPY chunk) arrives in many chunks: joined once, when whole.
      if (this.have < this.need) return NONE;
      bytes = Buffer.concat(this.pieces, this.have);
      this.pieces = [];
      this.have = 0;
    }
    const messages: BackendMessage[] = [];
    let offset = 0;
    while (bytes.length - offset >= 5) {
      const end = offset + 1 + bytes.readUInt32BE(offset + 1);
      if (end > bytes.length) break;
      const code = bytes[offset]!;
      const name = full ? undefined : LIGHT[code];
      if (name !== undefined) messages.push({ name, length: end - offset - 1 });
      else if (code === READY && !full)
        messages.push({ name: 'readyForQuery', length: 5, status: String.fromCharCode(bytes[offset + 5]!) } as never);
      else messages.push(this.decode(bytes.subarray(offset, end)));
      // A declared length under 4 is no message the server sends: step past its header all the same.
      offset = Math.max(end, offset + 5);
    }
    if (offset < bytes.length) {
      const rest = bytes.subarray(offset);
      this.pieces = [rest];
      this.have = rest.length;
      this.need = rest.length >= 5 ? 1 + rest.readUInt32BE(1) : 5;
    }
    return messages;
  }

  /** One whole message decoded by pg-protocol (whole, so its Parser keeps nothing between calls). */
  private decode(message: Buffer): BackendMessage {
    let decoded: BackendMessage | undefined;
    this.parser.parse(message, (m) => (decoded = m));
    // Only a message shorter than its header decodes to nothing: no server sends one.
    return decoded ?? { name: 'notice', length: 0 };
  }
}

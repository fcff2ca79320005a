/**
 * The bytes a transaction pool reads and rewrites between a client and a shared upstream session: the
 * frontend messages a client's session sends (cut by type and length, never decoded beyond what naming
 * needs), the statement name inside Parse, Bind, Describe and Close (a client's "P_1" becomes the pool's
 * own name on the server), and what each message's answer ends with.
 */

/** Each whole message in `bytes` (type byte, then a length that counts itself), without copying. */
export function frontendMessages(bytes: Uint8Array): Buffer[] {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Buffer[] = [];
  let offset = 0;
  while (buffer.length - offset >= 5) {
    const length = Math.max(buffer.readUInt32BE(offset + 1), 4);
    const end = Math.min(offset + 1 + length, buffer.length);
    out.push(buffer.subarray(offset, end));
    offset = end;
  }
  return out;
}

/** The NUL-terminated string at `offset` and where the next field starts. */
function cstring(message: Buffer, offset: number): { text: string; next: number } {
  const end = message.indexOf(0, offset);
  const stop = end < 0 ? message.length : end;
  return { text: message.toString('utf8', offset, stop), next: stop + 1 };
}

/** A Parse message: the statement's name and, as its key, its text and parameter types. */
export function readParse(message: Buffer): { name: string; key: string } {
  const name = cstring(message, 5);
  const sql = cstring(message, name.next);
  const types = message.subarray(sql.next).toString('hex');
  return { name: name.text, key: `${types}\u0000${sql.text}` };
}

/** Where the statement name of a Parse (5), Bind (after its portal), Describe/Close 'S' (6) starts; undefined for a portal. */
export function statementNameAt(message: Buffer): number | undefined {
  const type = message[0];
  if (type === 0x50) return 5; // Parse
  if (type === 0x42) return cstring(message, 5).next; // Bind: portal, then statement
  if ((type === 0x44 || type === 0x43) && message[5] === 0x53) return 6; // Describe / Close of a statement
  return undefined;
}

export function statementName(message: Buffer, at: number): string {
  return cstring(message, at).text;
}

/** The same message with the statement name at `at` replaced. */
export function renamed(message: Buffer, at: number, name: string): Buffer {
  const old = cstring(message, at);
  const head = message.subarray(0, at);
  const tail = message.subarray(old.next);
  const nameBytes = Buffer.from(`${name}\u0000`, 'utf8');
  const out = Buffer.concat([head, nameBytes, tail]);
  out.writeUInt32BE(out.length - 1, 1);
  return out;
}

/**
 * Which backend message types end the answer to a frontend message (by type byte); undefined: no answer
 * (Flush, COPY data). An ErrorResponse ends an extended-protocol message too (and the server skips to Sync).
 */
export function answerEnds(type: number): string | undefined {
  switch (type) {
    case 0x51: // Query
    case 0x46: // FunctionCall
    case 0x53: // Sync
      return 'Z';
    case 0x50: // Parse
      return '1';
    case 0x42: // Bind
      return '2';
    case 0x44: // Describe
      return 'Tn';
    case 0x45: // Execute
      return 'CIs';
    case 0x43: // Close
      return '3';
    default:
      return undefined;
  }
}

/** Whole backend messages out of a chunk, with what was left of the one before (the parser's messages follow the same cut). */
export class BackendCutter {
  private partial: Buffer | undefined;

  /** The whole messages this chunk completes; `whole` when the chunk is exactly those messages. */
  cut(chunk: Buffer): { messages: Buffer[]; whole: boolean } {
    const bytes = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    const whole = this.partial === undefined;
    this.partial = undefined;
    const messages: Buffer[] = [];
    let offset = 0;
    while (bytes.length - offset >= 5) {
      const length = bytes.readUInt32BE(offset + 1);
      if (bytes.length - offset < length + 1) break;
      messages.push(bytes.subarray(offset, offset + length + 1));
      offset += length + 1;
    }
    if (offset < bytes.length) this.partial = Buffer.from(bytes.subarray(offset));
    return { messages, whole: whole && offset === bytes.length };
  }
}

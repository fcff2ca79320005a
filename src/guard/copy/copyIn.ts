/**
 * `COPY … FROM STDIN`: a write whose rows travel after the statement, so neither a ticket nor a person would
 * see them. It runs only inside a measured transaction (the client's own upstream transaction, its COMMIT
 * approved as a whole with the rows per table it changed): the guard forwarded the statement, the upstream
 * answered CopyInResponse, and from then until CopyDone or CopyFail the client's CopyData go upstream as sent.
 * The data is part of the recorded statement: shown in the ticket, and its SHA-256 joins the statement's
 * template, so the approved transaction commits only with the same bytes.
 * Outside COPY mode the server ignores these messages, and so does the guard. Outside a transaction the
 * guard reads it itself (copyLoad.ts), or refuses it before the client enters COPY mode.
 */
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import type { Classification } from '../../core/sql/classification';
import { parseSql } from '../../core/sql/parse';
import { rec, str } from '../../core/sql/parseTree';
import { refusedError } from '../hold/heldMessages';
import type { ErrorFields } from '../wire/backendMessages';

/** Data bytes of a COPY shown in the transaction's ticket (beyond, the ticket shows their size and SHA-256 only). */
export const SHOWN_COPY_BYTES = 64 * 1024;

/** What a COPY read, once the client sent CopyDone: its identity (SHA-256) and the comment that shows it. */
export interface CopiedData {
  sha256: string;
  bytes: number;
  /** SQL line comments, put before the COPY statement in the ticket: the data as text, or its size and hash. */
  comment: string;
}

/** What a client may send in COPY mode (the server ignores Flush and Sync there). */
const COPY_MODE_MESSAGES = new Set(['copyData', 'copyDone', 'copyFail', 'flush', 'sync']);

export class CopyInRelay {
  private active = false;
  private hash = createHash('sha256');
  private bytes = 0;
  private shown: Buffer[] = [];

  constructor(
    private readonly send: (bytes: Uint8Array) => void,
    private readonly copied: (data: CopiedData) => void,
  ) {}

  /** Reads the upstream's messages: CopyInResponse starts COPY mode, an error or ReadyForQuery ends it. */
  observe(messages: readonly BackendMessage[]): void {
    for (const message of messages) {
      if (message.name === 'copyInResponse') this.start();
      else if (message.name === 'error' || message.name === 'readyForQuery') this.active = false;
    }
  }

  /** One CopyData, CopyDone or CopyFail of the client. */
  relay(raw: Uint8Array, type: 'copyData' | 'copyDone' | 'copyFail'): void {
    if (!this.active) return;
    if (type === 'copyData') {
      // The payload after the type byte and length: the data stream, however the client cut it into messages.
      const payload = Buffer.from(raw.buffer, raw.byteOffset + 5, raw.byteLength - 5);
      this.hash.update(payload);
      if (this.bytes < SHOWN_COPY_BYTES)
        this.shown.push(Buffer.from(payload.subarray(0, SHOWN_COPY_BYTES - this.bytes)));
      this.bytes += payload.length;
    } else this.active = false;
    this.send(raw);
    if (type === 'copyDone') this.copied(copiedData(this.hash.digest('hex'), this.bytes, Buffer.concat(this.shown)));
  }

  /**
   * Any other client message in COPY mode (a protocol error) first fails the COPY upstream, as the server
   * would, so that the guard, waiting for the COPY's answer before judging that message, is not left waiting.
   */
  interrupt(type: string): void {
    if (!this.active || COPY_MODE_MESSAGES.has(type)) return;
    this.active = false;
    this.send(serialize.copyFail(`the client sent a ${type} message during COPY`));
  }

  private start(): void {
    this.active = true;
    this.hash = createHash('sha256');
    this.bytes = 0;
    this.shown = [];
  }
}

function copiedData(sha256: string, bytes: number, shown: Buffer): CopiedData {
  const head = `-- The COPY below reads ${bytes} bytes of data (SHA-256 ${sha256})`;
  const text = shown.toString('utf8');
  // Shown as text only when it is all there and is text (a binary COPY, or a NUL, is shown by its hash alone).
  if (bytes > shown.length || !isUtf8(shown) || text.includes('\0')) return { sha256, bytes, comment: `${head}.` };
  const lines = text.replace(/(\r\n|\r|\n)$/, '').split(/\r\n|\r|\n/);
  return { sha256, bytes, comment: [`${head}:`, ...lines.map((line) => `--   ${line}`)].join('\n') };
}

/** The refusal of a `COPY … FROM STDIN` outside a measured transaction; undefined for any other statement. */
export function copyFromStdinProblem(classification: Classification): ErrorFields | undefined {
  const copy = classification.statements.find((s) => s.kind === 'CopyStmt' && isCopyFromStdin(s.sql));
  if (!copy) return undefined;
  return refusedError(
    `COPY … FROM STDIN outside a transaction is held only when sent alone in a simple query, as psql's \\copy sends it (its rows become the ticket's INSERT); not in the extended protocol or among other statements (${copy.sql.slice(0, 60)})`,
    'Send the COPY alone, or inside BEGIN … COMMIT: the transaction is then measured and held as a whole for approval.',
  );
}

export function isCopyFromStdin(sql: string): boolean {
  const node = rec(parseSql(sql).statements[0]?.tree, 'CopyStmt');
  return node !== undefined && node.is_from === true && node.is_program !== true && str(node, 'filename') === undefined;
}

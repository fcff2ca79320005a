/**
 * The few messages the guard writes to a client itself (everything else is the upstream's own bytes):
 * built with pg-protocol's Writer and pg-gateway's BackendError, never by hand.
 */
import { BackendError } from 'pg-gateway';
import { Writer } from 'pg-protocol/dist/buffer-writer';
import type { BackendMessage, NotificationResponseMessage } from 'pg-protocol/dist/messages';

export type TransactionStatus = 'I' | 'T' | 'E';

export interface ErrorFields {
  severity?: 'ERROR' | 'FATAL';
  code: string;
  message: string;
  detail?: string;
  hint?: string;
  position?: number;
}

export function errorResponse(fields: ErrorFields): Buffer {
  const error = BackendError.create({
    severity: fields.severity ?? 'ERROR',
    code: fields.code,
    message: fields.message,
    ...(fields.detail !== undefined ? { detail: fields.detail } : {}),
    ...(fields.hint !== undefined ? { hint: fields.hint } : {}),
    ...(fields.position !== undefined ? { position: String(fields.position) } : {}),
  });
  return Buffer.from(error.flush());
}

export function readyForQuery(status: TransactionStatus): Buffer {
  return new Writer().addString(status).flush(0x5a);
}

export function commandComplete(tag: string): Buffer {
  return new Writer().addCString(tag).flush(0x43);
}

export function parameterStatus(name: string, value: string): Buffer {
  return new Writer().addCString(name).addCString(value).flush(0x53);
}

export function backendKeyData(processId: number, secretKey: number): Buffer {
  return new Writer().addInt32(processId).addInt32(secretKey).flush(0x4b);
}

export function parseComplete(): Buffer {
  return new Writer().flush(0x31);
}

export function bindComplete(): Buffer {
  return new Writer().flush(0x32);
}

export function noData(): Buffer {
  return new Writer().flush(0x6e);
}

export function closeComplete(): Buffer {
  return new Writer().flush(0x33);
}

export function parameterDescription(oids: readonly number[]): Buffer {
  const writer = new Writer().addInt16(oids.length);
  for (const oid of oids) writer.addInt32(oid);
  return writer.flush(0x74);
}

/** The NotificationResponses among `messages` (a NOTIFY for the client's LISTEN amid the guard's own query's answer). */
export function notificationsIn(messages: readonly BackendMessage[]): Buffer {
  const notifications = messages.filter((m): m is NotificationResponseMessage => m.name === 'notification');
  return Buffer.concat(
    notifications.map((n) =>
      new Writer().addInt32(n.processId).addCString(n.channel).addCString(n.payload).flush(0x41),
    ),
  );
}

/** The guard's own CopyInResponse (a COPY FROM STDIN it reads itself): text format, every column text. */
export function copyInResponse(columns: number): Buffer {
  const writer = new Writer().add(Buffer.from([0])).addInt16(columns);
  for (let i = 0; i < columns; i++) writer.addInt16(0);
  return writer.flush(0x47);
}

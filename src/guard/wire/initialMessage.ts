/**
 * What a client's first message is, before pg-gateway reads it: pg-gateway knows SSLRequest and a v3.0
 * StartupMessage; the guard answers the rest itself, as PostgreSQL does: a CancelRequest (its own keys), a
 * GSSENCRequest ('N': no GSSAPI encryption here, libpq then goes on without it) and anything else
 * (FATAL 08P01, where pg-gateway would print a stack trace and drop the socket).
 */
export type InitialMessage = 'ssl' | 'gssenc' | 'startup' | 'cancel' | 'invalid';

export const CANCEL_REQUEST_CODE = 80877102;
const SSL_REQUEST_CODE = 80877103;
const GSSENC_REQUEST_CODE = 80877104;
const PROTOCOL_3_0 = 196608;

export function initialMessageKind(data: Uint8Array): InitialMessage {
  if (data.byteLength < 8) return 'invalid';
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const length = view.getInt32(0);
  if (length !== data.byteLength) return 'invalid';
  const code = view.getInt32(4);
  if (length === 8 && code === SSL_REQUEST_CODE) return 'ssl';
  if (length === 8 && code === GSSENC_REQUEST_CODE) return 'gssenc';
  if (length === 16 && code === CANCEL_REQUEST_CODE) return 'cancel';
  return code === PROTOCOL_3_0 ? 'startup' : 'invalid';
}

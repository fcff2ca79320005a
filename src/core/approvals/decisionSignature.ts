/**
 * Signed decisions (SPEC §5.3): an Ed25519 signature (node:crypto) over the ticket id, the hash of what
 * was decided, the decision and its time; a scoped signature (signed mode, SPEC §5 3a) covers also the
 * ticket's kind (and a guard transaction's origin), the database's identity, the approved impact bounds and
 * the policy version. The hash is ticketHash(): for a guard transaction it covers its statement list. Public keys
 * travel as the 32 raw bytes in base64url (JWK "x").
 */
import type { KeyObject } from 'node:crypto';
import { createPublicKey, sign, verify } from 'node:crypto';
import type { DecisionScope, Ticket } from './ticket';
import { decisionPayload } from './ticket';

/**
 * The bytes a scoped signature covers. The impact bounds are the ones the executor enforces (risk, exact
 * rows, every table's counts): an agent that edits them on the ticket to let a bigger write through breaks
 * the signature.
 */
export function scopedDecisionPayload(
  ticket: Pick<Ticket, 'id' | 'kind' | 'origin' | 'risk' | 'impact'>,
  hash: string,
  approve: boolean,
  at: string,
  scope: DecisionScope,
): Buffer {
  const tables = ticket.impact.tables.map((t) => [t.schema, t.name, t.via, t.inserted, t.updated, t.deleted]);
  return Buffer.from(
    JSON.stringify({
      v: 2,
      ticket: ticket.id,
      kind: ticket.kind,
      // A guard transaction's origin (its statements and effects are in the hash too, ticketHash); absent for
      // 'statement' tickets, so their payload is the one signed before origins existed.
      ...(ticket.origin === 'guardTransaction' ? { origin: ticket.origin } : {}),
      hash,
      database: scope.database,
      risk: ticket.risk,
      exactRows: ticket.impact.exactRows,
      tables,
      policyVersion: scope.policyVersion,
      decision: approve ? 'approve' : 'reject',
      at,
    }),
    'utf8',
  );
}

export function signScopedDecision(
  privateKey: KeyObject,
  ticket: Pick<Ticket, 'id' | 'kind' | 'origin' | 'risk' | 'impact'>,
  hash: string,
  approve: boolean,
  at: string,
  scope: DecisionScope,
): string {
  return sign(null, scopedDecisionPayload(ticket, hash, approve, at, scope), privateKey).toString('base64url');
}

export function verifyScopedDecision(
  publicKey: string,
  ticket: Pick<Ticket, 'id' | 'kind' | 'origin' | 'risk' | 'impact'>,
  hash: string,
  approve: boolean,
  at: string,
  scope: DecisionScope,
  signature: string,
): boolean {
  try {
    return verify(
      null,
      scopedDecisionPayload(ticket, hash, approve, at, scope),
      publicKeyFrom(publicKey),
      Buffer.from(signature, 'base64url'),
    );
  } catch {
    return false;
  }
}

export function signDecision(
  privateKey: KeyObject,
  ticketId: string,
  hash: string,
  approve: boolean,
  at: string,
): string {
  return sign(null, decisionPayload(ticketId, hash, approve, at), privateKey).toString('base64url');
}

/** False for a wrong signature, a malformed one, or a public key that is not an Ed25519 key. */
export function verifyDecision(
  publicKey: string,
  ticketId: string,
  hash: string,
  approve: boolean,
  at: string,
  signature: string,
): boolean {
  let key: KeyObject;
  try {
    key = publicKeyFrom(publicKey);
  } catch {
    return false;
  }
  try {
    return verify(null, decisionPayload(ticketId, hash, approve, at), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

export function publicKeyFrom(publicKey: string): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
}

/** The base64url form of a key pair's public half, as it goes into approval.approvers. */
export function publicKeyText(key: KeyObject): string {
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new Error('not an Ed25519 key');
  return jwk.x;
}

/**
 * Signed decisions (SPEC §5.3): an Ed25519 signature (node:crypto) over the ticket id, the hash of what
 * was decided, the decision and its time. Public keys travel as the 32 raw bytes in base64url (JWK "x").
 */
import type { KeyObject } from 'node:crypto';
import { createPublicKey, sign, verify } from 'node:crypto';
import { decisionPayload } from './ticket';

export function signDecision(privateKey: KeyObject, ticketId: string, hash: string, approve: boolean, at: string): string {
  return sign(null, decisionPayload(ticketId, hash, approve, at), privateKey).toString('base64url');
}

/** False for a wrong signature, a malformed one, or a public key that is not an Ed25519 key. */
export function verifyDecision(publicKey: string, ticketId: string, hash: string, approve: boolean, at: string, signature: string): boolean {
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

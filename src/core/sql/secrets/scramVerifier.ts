/**
 * The SCRAM-SHA-256 verifier of a password, computed on the client as psql's `\password` does (RFC 5802/7677,
 * PostgreSQL's `scram_build_secret`): `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`. PostgreSQL
 * stores such a text as it is when it is given as the password, so the clear text never has to leave here.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

export const SCRAM_ITERATIONS = 4096;
const SALT_BYTES = 16;
const VERIFIER = /^SCRAM-SHA-256\$(\d+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/;

export interface VerifierParts {
  iterations: number;
  salt: Buffer;
}

/** The verifier of `password`; a fresh random salt unless `reuse` gives one (to recognise the same password). */
export function scramVerifier(password: string, reuse?: VerifierParts): string {
  const salt = reuse?.salt ?? randomBytes(SALT_BYTES);
  const iterations = reuse?.iterations ?? SCRAM_ITERATIONS;
  const salted = pbkdf2Sync(Buffer.from(saslPrep(password), 'utf8'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** The iterations and salt of a verifier, or undefined when `text` is not one. */
export function verifierParts(text: string): VerifierParts | undefined {
  const match = VERIFIER.exec(text);
  if (!match?.[1] || !match[2]) return undefined;
  return { iterations: Number(match[1]), salt: Buffer.from(match[2], 'base64') };
}

/** True when `text` is already a verifier PostgreSQL stores as it is (SCRAM, or the legacy md5 hash). */
export function isPrehashed(text: string): boolean {
  return VERIFIER.test(text) || /^md5[0-9a-f]{32}$/.test(text);
}

/** True when `verifier` is the verifier of `password`. */
export function verifies(verifier: string, password: string): boolean {
  const parts = verifierParts(verifier);
  if (!parts) return false;
  const again = Buffer.from(scramVerifier(password, parts));
  const given = Buffer.from(verifier);
  return again.length === given.length && timingSafeEqual(again, given);
}

/**
 * SASLprep as PostgreSQL applies it (pg_saslprep): ASCII passes unchanged; other text is NFKC-normalised with
 * non-ASCII spaces mapped to a space and the "mapped to nothing" characters removed. A text PostgreSQL's own
 * SASLprep rejects (prohibited or bidi-mixed characters) is used raw by it; we normalise it the same way, which
 * differs only for such texts.
 */
// RFC 3454 B.1, written as code points: several are combining marks, which a character class would misread.
const MAPPED_TO_NOTHING = new RegExp(
  [0xad, 0x34f, 0x1806, 0x180b, 0x180c, 0x180d, 0x200c, 0x200d, 0x2060, 0xfeff]
    .concat(Array.from({ length: 16 }, (_, i) => 0xfe00 + i))
    .map((c) => `\\u${c.toString(16).padStart(4, '0')}`)
    .join('|'),
  'g',
);

function saslPrep(password: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(password)) return password;
  return password
    .replace(/[\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000]/g, ' ')
    .replace(MAPPED_TO_NOTHING, '')
    .normalize('NFKC');
}

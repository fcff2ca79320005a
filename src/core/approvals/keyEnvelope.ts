/**
 * A private key encrypted at rest with a passphrase (SPEC §5 3a, signed mode): scrypt (memory-hard, so a
 * copied key file costs an attacker real work per guess) derives an AES-256-GCM key; GCM authenticates, so a
 * wrong passphrase or an edited file is detected for certain, never decrypted into garbage. The same envelope
 * is used by the CLI's key files and by VS Code's SecretStorage entry.
 */
import type { KeyObject } from 'node:crypto';
import { createCipheriv, createDecipheriv, createPrivateKey, randomBytes, scrypt } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import { publicKeyText } from './decisionSignature';

export const KEY_ENVELOPE_FORMAT = 'pg-agent-key/1' as const;
/** 2^15 × 8 × 128 bytes = 32 MiB and about 0.1 s per try on a laptop. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;
export const MIN_PASSPHRASE_LENGTH = 8;

const envelopeSchema = z.object({
  format: z.literal(KEY_ENVELOPE_FORMAT),
  name: z.string(),
  publicKey: z.string(),
  kdf: z.object({
    name: z.literal('scrypt'),
    N: z.number().int(),
    r: z.number().int(),
    p: z.number().int(),
    salt: z.string(),
  }),
  cipher: z.literal('aes-256-gcm'),
  iv: z.string(),
  tag: z.string(),
  data: z.string(),
});

export type KeyEnvelope = z.infer<typeof envelopeSchema>;

function deriveKey(passphrase: string, salt: Buffer, kdf: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      passphrase.normalize('NFC'),
      salt,
      32,
      { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

/** Everything but the ciphertext is bound in as associated data: no field can be swapped from another file. */
function associatedData(envelope: Pick<KeyEnvelope, 'format' | 'name' | 'publicKey' | 'kdf' | 'cipher'>): Buffer {
  return Buffer.from(
    JSON.stringify([envelope.format, envelope.name, envelope.publicKey, envelope.kdf, envelope.cipher]),
    'utf8',
  );
}

export function assertPassphrase(passphrase: string): void {
  if (passphrase.length < MIN_PASSPHRASE_LENGTH) {
    throw new AgentError(
      'BAD_INPUT',
      `A passphrase of ${MIN_PASSPHRASE_LENGTH} characters or more is needed.`,
      'It is what stands between a copied key file and your signature: pick a long one.',
    );
  }
}

export async function sealPrivateKey(name: string, privateKey: KeyObject, passphrase: string): Promise<string> {
  assertPassphrase(passphrase);
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const kdf = { name: 'scrypt' as const, ...SCRYPT, salt: salt.toString('base64') };
  const head = {
    format: KEY_ENVELOPE_FORMAT,
    name,
    publicKey: publicKeyText(privateKey),
    kdf,
    cipher: 'aes-256-gcm' as const,
  };
  const cipher = createCipheriv('aes-256-gcm', await deriveKey(passphrase, salt, kdf), iv);
  cipher.setAAD(associatedData(head));
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  const data = Buffer.concat([cipher.update(der), cipher.final()]);
  const envelope: KeyEnvelope = {
    ...head,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
  return `${JSON.stringify(envelope, null, 2)}\n`;
}

export function parseEnvelope(text: string, where: string): KeyEnvelope {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentError(
      'CONFIG_INVALID',
      `${where} is not an encrypted pg-agent key.`,
      'Make a new one with `pg-agent keys new --name NAME`.',
      { cause: error },
    );
  }
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success)
    throw new AgentError(
      'CONFIG_INVALID',
      `${where} is not an encrypted pg-agent key (${parsed.error.issues[0]?.message ?? 'bad shape'}).`,
      'Make a new one with `pg-agent keys new --name NAME`.',
    );
  return parsed.data;
}

/** The private key, or APPROVAL_POLICY (exit 4) for a wrong passphrase or an altered file: nothing is signed. */
export async function openPrivateKey(envelope: KeyEnvelope, passphrase: string, where: string): Promise<KeyObject> {
  // Bounds on the stored parameters, so a planted file cannot make us spend gigabytes or accept a weak KDF.
  if (
    envelope.kdf.N < SCRYPT.N ||
    envelope.kdf.N > 2 ** 20 ||
    envelope.kdf.r < 8 ||
    envelope.kdf.r > 32 ||
    envelope.kdf.p < 1 ||
    envelope.kdf.p > 4
  ) {
    throw new AgentError(
      'CONFIG_INVALID',
      `${where} has key-derivation parameters pg-agent does not accept.`,
      'Make a new key with `pg-agent keys new --name NAME`.',
    );
  }
  const wrong = () =>
    new AgentError(
      'APPROVAL_POLICY',
      `Wrong passphrase for the key "${envelope.name}" (or ${where} was altered): nothing was signed.`,
      'Try again, typing the passphrase you chose when you made the key.',
    );
  let der: Buffer;
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      await deriveKey(passphrase, Buffer.from(envelope.kdf.salt, 'base64'), envelope.kdf),
      Buffer.from(envelope.iv, 'base64'),
    );
    decipher.setAAD(associatedData(envelope));
    decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
    der = Buffer.concat([decipher.update(Buffer.from(envelope.data, 'base64')), decipher.final()]);
  } catch {
    throw wrong();
  }
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  if (privateKey.asymmetricKeyType !== 'ed25519' || publicKeyText(privateKey) !== envelope.publicKey) throw wrong();
  return privateKey;
}

/**
 * Approvers' private keys for the CLI (SPEC §5.3, 3a): Ed25519 key pairs made with node:crypto, the private
 * key encrypted with a passphrase (keyEnvelope.ts) in `$XDG_CONFIG_HOME/pg-agent/keys/NAME.key` (default
 * ~/.config), outside every workspace, readable by its owner only (0600). VS Code keeps the same envelope in
 * SecretStorage.
 */
import type { KeyObject } from 'node:crypto';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Env } from '../db/connectionTarget';
import { AgentError } from '../platform/errors';
import type { SigningKey } from './approvalPath';
import { publicKeyText } from './decisionSignature';
import { assertPassphrase, openPrivateKey, parseEnvelope, sealPrivateKey } from './keyEnvelope';
import { isErrno } from '../fs/errno';

export const KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function keysDir(env: Env): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), '.config');
  return join(base, 'pg-agent', 'keys');
}

export function assertKeyName(name: string): void {
  if (!KEY_NAME_PATTERN.test(name)) {
    throw new AgentError(
      'BAD_INPUT',
      `"${name.slice(0, 60)}" cannot name a key.`,
      'Use letters, digits, dot, dash and underscore (up to 64), e.g. --name alice.',
    );
  }
}

/** Asks a person for a passphrase (the CLI: on the controlling terminal only; VS Code: a password box). */
export type PassphrasePrompt = (question: string) => Promise<string>;

const ENCRYPTED = '.key';
/** Keys made before passphrases: unencrypted PKCS#8 PEM, refused for signing until protected. */
const LEGACY = '.pem';

function isMissing(error: unknown): boolean {
  return isErrno(error, 'ENOENT');
}

/** Writes a file once (never over an existing key), mode 0600. */
async function writeNew(file: string, text: string, name: string): Promise<void> {
  let handle;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (error) {
    if (isErrno(error, 'EEXIST')) {
      throw new AgentError(
        'BAD_INPUT',
        `You already have a key named "${name}" (${file}).`,
        'Pick another --name, or use the key you have.',
      );
    }
    throw error;
  }
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(file, 0o600);
}

async function assertNameFree(env: Env, name: string): Promise<void> {
  for (const ext of [ENCRYPTED, LEGACY]) {
    const file = join(keysDir(env), `${name}${ext}`);
    let exists = true;
    try {
      await stat(file);
    } catch (error) {
      if (!isMissing(error)) throw error;
      exists = false;
    }
    if (exists) {
      throw new AgentError(
        'BAD_INPUT',
        `You already have a key named "${name}" (${file}).`,
        'Pick another --name, or use the key you have.',
      );
    }
  }
}

/**
 * A new key pair, the private key encrypted with the passphrase (keyEnvelope.ts) and written once with mode
 * 0600. It makes a key, never an approver: enrolment is an admin's signed act (or the team's config file).
 */
export async function createKey(
  env: Env,
  name: string,
  passphrase: string,
): Promise<{ name: string; publicKey: string; file: string }> {
  assertKeyName(name);
  assertPassphrase(passphrase);
  const dir = keysDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await assertNameFree(env, name);
  const { privateKey } = generateKeyPairSync('ed25519');
  const file = join(dir, `${name}${ENCRYPTED}`);
  await writeNew(file, await sealPrivateKey(name, privateKey, passphrase), name);
  return { name, publicKey: publicKeyText(privateKey), file };
}

/** `keys protect NAME`: encrypts a key made before passphrases existed and removes the unencrypted file. */
export async function protectKey(
  env: Env,
  name: string,
  passphrase: string,
): Promise<{ name: string; publicKey: string; file: string }> {
  assertKeyName(name);
  assertPassphrase(passphrase);
  const legacy = join(keysDir(env), `${name}${LEGACY}`);
  let pem: string;
  try {
    pem = await readFile(legacy, 'utf8');
  } catch (error) {
    if (isMissing(error))
      throw new AgentError(
        'BAD_INPUT',
        `There is no unencrypted key named "${name}" in ${keysDir(env)}.`,
        'List your keys with `pg-agent keys list`.',
      );
    throw error;
  }
  const privateKey = legacyKey(pem, legacy);
  const file = join(keysDir(env), `${name}${ENCRYPTED}`);
  await writeNew(file, await sealPrivateKey(name, privateKey, passphrase), name);
  await unlink(legacy);
  return { name, publicKey: publicKeyText(privateKey), file };
}

function legacyKey(pem: string, file: string): KeyObject {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw new AgentError(
      'CONFIG_INVALID',
      `${file} is not a private key.`,
      'Make a new one with `pg-agent keys new --name NAME`.',
      { cause: error },
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new AgentError('CONFIG_INVALID', `${file} is not an Ed25519 key.`);
  return privateKey;
}

export async function listKeys(env: Env): Promise<string[]> {
  try {
    const names = (await readdir(keysDir(env)))
      .filter((f) => f.endsWith(ENCRYPTED) || f.endsWith(LEGACY))
      .map((f) => f.slice(0, f.lastIndexOf('.')))
      .filter((n) => KEY_NAME_PATTERN.test(n));
    return [...new Set(names)].sort();
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/** The public half of a key, read without its passphrase (an encrypted key stores it in the clear). */
export async function keyPublicText(env: Env, name: string): Promise<string> {
  assertKeyName(name);
  const file = join(keysDir(env), `${name}${ENCRYPTED}`);
  try {
    return parseEnvelope(await readFile(file, 'utf8'), file).publicKey;
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const legacy = join(keysDir(env), `${name}${LEGACY}`);
  try {
    return publicKeyText(legacyKey(await readFile(legacy, 'utf8'), legacy));
  } catch (error) {
    if (isMissing(error))
      throw new AgentError(
        'BAD_INPUT',
        `There is no key named "${name}" in ${keysDir(env)}.`,
        'Make one with `pg-agent keys new --name NAME`.',
      );
    throw error;
  }
}

/**
 * The signing key, opened with the passphrase a person types. No way to ask (no terminal) is a refusal, as is
 * a key stored unencrypted: a file any process of this user can read signs nothing.
 */
export async function loadKey(
  env: Env,
  name: string,
  askPassphrase: PassphrasePrompt | undefined,
): Promise<SigningKey> {
  assertKeyName(name);
  const file = join(keysDir(env), `${name}${ENCRYPTED}`);
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (text === undefined) {
    const legacy = join(keysDir(env), `${name}${LEGACY}`);
    if (
      await stat(legacy).then(
        () => true,
        () => false,
      )
    ) {
      throw new AgentError(
        'APPROVAL_POLICY',
        `The key "${name}" (${legacy}) is stored without a passphrase, so any program running as you could sign with it: it is not used for signing.`,
        `Encrypt it with \`pg-agent keys protect ${name}\` (you choose a passphrase), or make a new key with \`pg-agent keys new --name NAME\`.`,
      );
    }
    throw new AgentError(
      'BAD_INPUT',
      `There is no key named "${name}" in ${keysDir(env)}.`,
      'Make one with `pg-agent keys new --name NAME`.',
    );
  }
  const envelope = parseEnvelope(text, file);
  if (envelope.name !== name)
    throw new AgentError(
      'CONFIG_INVALID',
      `${file} holds the key "${envelope.name}", not "${name}".`,
      'Keys are not renamed by renaming their file; make a new one.',
    );
  if (!askPassphrase) {
    throw new AgentError(
      'APPROVAL_POLICY',
      `Signing with the key "${name}" needs its passphrase, typed by a person on this terminal, and there is no terminal to ask on: nothing was signed.`,
      'Run the command yourself in a terminal. The passphrase is never read from a flag, an environment variable or a pipe, so that no program can approve in your name.',
    );
  }
  const privateKey = await openPrivateKey(envelope, await askPassphrase(`Passphrase for the key "${name}": `), file);
  return { name, privateKey };
}

/**
 * The key a decision is signed with: the one named, else the caller's only key, else none (unsigned).
 * Several keys and no name is a question only the person can answer.
 */
export async function callerKey(
  env: Env,
  name: string | undefined,
  askPassphrase: PassphrasePrompt | undefined,
): Promise<SigningKey | undefined> {
  if (name !== undefined) return loadKey(env, name, askPassphrase);
  const names = await listKeys(env);
  if (names.length === 0) return undefined;
  const [only] = names;
  if (names.length > 1 || only === undefined) {
    throw new AgentError(
      'BAD_INPUT',
      `You have several keys (${names.join(', ')}); which one signs?`,
      'Pick one with --key NAME.',
    );
  }
  return loadKey(env, only, askPassphrase);
}

/** Who the caller is when asking for something: --by, else their only key's name, else $USER. */
export async function requesterName(env: Env, by: string | undefined): Promise<string> {
  if (by !== undefined && by.trim() !== '') return by.trim();
  const names = await listKeys(env);
  if (names.length === 1 && names[0] !== undefined) return names[0];
  return env.USER ?? env.USERNAME ?? 'cli-user';
}

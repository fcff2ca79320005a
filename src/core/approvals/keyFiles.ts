/**
 * Approvers' private keys for the CLI (SPEC §5.3): Ed25519 key pairs made with node:crypto, the private
 * key as a PEM file outside every workspace, in `$XDG_CONFIG_HOME/pg-agent/keys/` (default ~/.config),
 * readable by its owner only (0600). VS Code keeps its key in SecretStorage instead.
 */
import type { KeyObject } from 'node:crypto';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Env } from '../db/connectionTarget';
import { AgentError } from '../errors';
import type { SigningKey } from './approvalPath';
import { publicKeyText } from './decisionSignature';

export const KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function keysDir(env: Env): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), '.config');
  return join(base, 'pg-agent', 'keys');
}

export function assertKeyName(name: string): void {
  if (!KEY_NAME_PATTERN.test(name)) {
    throw new AgentError('BAD_INPUT', `"${name.slice(0, 60)}" cannot name a key.`, 'Use letters, digits, dot, dash and underscore (up to 64), e.g. --name alice.');
  }
}

/** A new key pair; the private key is written once (never over an existing key) with mode 0600. */
export async function createKey(env: Env, name: string): Promise<{ name: string; publicKey: string; file: string }> {
  assertKeyName(name);
  const dir = keysDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ed25519');
  const file = join(dir, `${name}.pem`);
  let handle;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'EEXIST') {
      throw new AgentError('BAD_INPUT', `You already have a key named "${name}" (${file}).`, 'Pick another --name, or use the key you have.');
    }
    throw error;
  }
  try {
    await handle.writeFile(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(file, 0o600);
  return { name, publicKey: publicKeyText(privateKey), file };
}

export async function listKeys(env: Env): Promise<string[]> {
  try {
    return (await readdir(keysDir(env)))
      .filter((f) => f.endsWith('.pem'))
      .map((f) => f.slice(0, -'.pem'.length))
      .filter((n) => KEY_NAME_PATTERN.test(n))
      .sort();
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return [];
    throw error;
  }
}

export async function loadKey(env: Env, name: string): Promise<SigningKey> {
  assertKeyName(name);
  const file = join(keysDir(env), `${name}.pem`);
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') {
      throw new AgentError('BAD_INPUT', `There is no key named "${name}" in ${keysDir(env)}.`, 'Make one with `pg-agent keys new --name NAME`.');
    }
    throw error;
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw new AgentError('CONFIG_INVALID', `${file} is not a private key.`, 'Make a new one with `pg-agent keys new --name NAME`.', { cause: error });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new AgentError('CONFIG_INVALID', `${file} is not an Ed25519 key.`);
  return { name, privateKey };
}

/**
 * The key a decision is signed with: the one named, else the caller's only key, else none (unsigned).
 * Several keys and no name is a question only the person can answer.
 */
export async function callerKey(env: Env, name?: string): Promise<SigningKey | undefined> {
  if (name !== undefined) return loadKey(env, name);
  const names = await listKeys(env);
  if (names.length === 0) return undefined;
  const [only] = names;
  if (names.length > 1 || only === undefined) {
    throw new AgentError('BAD_INPUT', `You have several keys (${names.join(', ')}); which one signs?`, 'Pick one with --key NAME.');
  }
  return loadKey(env, only);
}

/** Who the caller is when asking for something: --by, else their only key's name, else $USER. */
export async function requesterName(env: Env, by: string | undefined): Promise<string> {
  if (by !== undefined && by.trim() !== '') return by.trim();
  const names = await listKeys(env);
  if (names.length === 1 && names[0] !== undefined) return names[0];
  return env.USER ?? env.USERNAME ?? 'cli-user';
}

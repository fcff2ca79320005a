/**
 * pg-agent's own known_hosts (in the person's config folder, never the workspace): an SSH host's key is
 * pinned the first time a person accepts its fingerprint, and a different key later is refused with both
 * fingerprints. Lines are `host:port keytype base64-key`, one per host and port.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../../fs/atomicWrite';
import { isErrno } from '../../fs/errno';
import { withFileMutex } from '../../fs/fileMutex';
import { AgentError } from '../../platform/errors';

/** OpenSSH's fingerprint of a key blob: "SHA256:" and the unpadded base64 of its SHA-256. */
export function fingerprintOf(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH key blob ("ssh-ed25519", "rsa-sha2-512" keys say "ssh-rsa"). */
export function keyTypeOf(keyBlob: Buffer): string {
  if (keyBlob.length < 4) return 'unknown';
  const length = keyBlob.readUInt32BE(0);
  return length > 0 && length < 64 && keyBlob.length >= 4 + length
    ? keyBlob.subarray(4, 4 + length).toString('latin1')
    : 'unknown';
}

export type HostKeyCheck =
  | { kind: 'pinned' }
  | { kind: 'unknown'; fingerprint: string }
  | { kind: 'changed'; pinned: string; presented: string };

/** `host:port` as written in the file (hosts are compared case-insensitively, like OpenSSH). */
function entryName(host: string, port: number): string {
  return `${host.toLowerCase()}:${port}`;
}

function readEntries(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return [];
    throw new AgentError(
      'CONFIG_INVALID',
      `Cannot read pg-agent's known hosts file ${file}: ${(error as Error).message}.`,
      'Check its permissions.',
    );
  }
}

export function checkHostKey(file: string, host: string, port: number, keyBlob: Buffer): HostKeyCheck {
  const name = entryName(host, port);
  const presented = fingerprintOf(keyBlob);
  for (const line of readEntries(file)) {
    const [entry, , key] = line.trim().split(/\s+/);
    if (entry !== name || !key) continue;
    const pinned = Buffer.from(key, 'base64');
    return pinned.equals(keyBlob) ? { kind: 'pinned' } : { kind: 'changed', pinned: fingerprintOf(pinned), presented };
  }
  return { kind: 'unknown', fingerprint: presented };
}

/** Pins the key of host:port (only when no key is pinned for it yet: a changed key is never replaced here). */
export async function pinHostKey(file: string, host: string, port: number, keyBlob: Buffer): Promise<void> {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  await withFileMutex(
    `${file}.lock`,
    async () => {
      const entries = readEntries(file);
      const name = entryName(host, port);
      if (entries.some((line) => line.trim().split(/\s+/)[0] === name)) return;
      entries.push(`${name} ${keyTypeOf(keyBlob)} ${keyBlob.toString('base64')}`);
      await writeFileAtomic(file, `${entries.join('\n')}\n`);
    },
    () =>
      new AgentError(
        'INTERNAL',
        `pg-agent's known hosts file ${file} stayed locked.`,
        `Remove ${file}.lock if no pg-agent is running.`,
      ),
  );
}

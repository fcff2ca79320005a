import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkHostKey, fingerprintOf, keyTypeOf, pinHostKey } from '../../../../src/core/db/tunnel/knownHosts';
import { hopsOf, nameHop, parseHopAddress, tunnelKey } from '../../../../src/core/db/tunnel/sshConfig';
import {
  connectionKey,
  describeTarget,
  parseConnectionUrl,
  profileTarget,
} from '../../../../src/core/db/connectionTarget';
import { readConfigFile } from '../../../../src/core/config/workspace';

/** An SSH key blob: string "ssh-ed25519", then 32 key bytes. */
function blob(fill: number): Buffer {
  const type = Buffer.from('ssh-ed25519');
  const key = Buffer.alloc(32, fill);
  const out = Buffer.alloc(4 + type.length + 4 + key.length);
  out.writeUInt32BE(type.length, 0);
  type.copy(out, 4);
  out.writeUInt32BE(key.length, 4 + type.length);
  key.copy(out, 8 + type.length);
  return out;
}

describe('SSH settings', () => {
  it('reads user@host[:port] as a form writes it, and refuses what is not one', () => {
    expect(parseHopAddress(' deploy@bastion.example.com ')).toEqual({ user: 'deploy', host: 'bastion.example.com' });
    expect(parseHopAddress('deploy@10.0.0.1:2222')).toEqual({ user: 'deploy', host: '10.0.0.1', port: 2222 });
    expect(parseHopAddress('me@[::1]:22')).toEqual({ user: 'me', host: '::1', port: 22 });
    expect(parseHopAddress('bastion')).toBeUndefined();
    expect(parseHopAddress('a@b:70000')).toBeUndefined();
  });

  it('orders hops jump hosts first and names each one', () => {
    const config = {
      host: 'bastion',
      user: 'deploy',
      auth: 'agent' as const,
      jumpHosts: [{ host: 'edge', port: 2200, user: 'me', auth: 'key' as const, keyFile: '/k' }],
    };
    const hops = hopsOf(config);
    expect(hops.map((h) => h.host)).toEqual(['edge', 'bastion']);
    expect(nameHop(hops, 0)).toBe('jump host 1 of 1 me@edge:2200');
    expect(nameHop(hops, 1)).toBe('the SSH host (last hop) deploy@bastion:22');
    expect(tunnelKey(config)).toBe('me@edge:2200[key:/k] -> deploy@bastion:22[agent]');
  });

  it('puts the route in the connection key and the label, so the same address behind two bastions is two databases', () => {
    const profile = {
      name: 'p',
      host: '127.0.0.1',
      database: 'shop',
      user: 'app',
      ssh: { host: 'bastion-a', user: 'u', auth: 'agent' as const },
    };
    const a = connectionKey(profileTarget(profile), '');
    const b = connectionKey(profileTarget({ ...profile, ssh: { ...profile.ssh, host: 'bastion-b' } }), '');
    expect(a).toBe('postgres://app@127.0.0.1:5432/shop?ssh=u%40bastion-a%3A22');
    expect(a).not.toBe(b);
    expect(connectionKey(profileTarget({ ...profile, ssh: undefined }), '')).toBe('postgres://app@127.0.0.1:5432/shop');
    expect(describeTarget(profileTarget(profile))).toBe('p (app@127.0.0.1:5432/shop via ssh u@bastion-a:22)');
    // Nothing connects to such a key directly (it would reach this machine's 127.0.0.1, another database).
    expect(() => parseConnectionUrl(a)).toThrow(/Unknown connection option "ssh"/);
  });
});

describe("pg-agent's known_hosts", () => {
  it('is unknown, then pinned, and a different key is reported as changed with both fingerprints; pinning never replaces', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'known-'));
    try {
      const file = path.join(dir, 'sub', 'known_hosts');
      const key = blob(1);
      expect(keyTypeOf(key)).toBe('ssh-ed25519');
      expect(checkHostKey(file, 'Bastion', 22, key)).toEqual({ kind: 'unknown', fingerprint: fingerprintOf(key) });
      await pinHostKey(file, 'Bastion', 22, key);
      expect(checkHostKey(file, 'bastion', 22, key)).toEqual({ kind: 'pinned' });
      expect(checkHostKey(file, 'bastion', 2222, key).kind).toBe('unknown');
      const other = blob(2);
      expect(checkHostKey(file, 'bastion', 22, other)).toEqual({
        kind: 'changed',
        pinned: fingerprintOf(key),
        presented: fingerprintOf(other),
      });
      await pinHostKey(file, 'bastion', 22, other);
      expect(checkHostKey(file, 'bastion', 22, key)).toEqual({ kind: 'pinned' });
      expect(fingerprintOf(key)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('profiles in .pgagent/config.json', () => {
  it('take ssh, iam and TLS files, and refuse a secret written into them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'profiles-'));
    try {
      const file = path.join(dir, 'config.json');
      const profile = {
        name: 'prod',
        host: '127.0.0.1',
        database: 'shop',
        user: 'app',
        sslmode: 'verify-full',
        sslrootcert: '/ca.crt',
        ssh: {
          host: 'bastion',
          user: 'deploy',
          auth: 'key',
          keyFile: '/k',
          jumpHosts: [{ host: 'edge', user: 'me', auth: 'agent' }],
          keepAliveSeconds: 30,
        },
        iam: { provider: 'aws-rds', region: 'eu-west-1' },
      };
      fs.writeFileSync(file, JSON.stringify({ connections: [profile] }));
      expect((await readConfigFile(file)).connections).toEqual([profile]);
      for (const secret of [
        { ...profile, password: 'x' },
        { ...profile, ssh: { ...profile.ssh, passphrase: 'x' } },
        { ...profile, ssh: { ...profile.ssh, password: 'x' } },
      ]) {
        fs.writeFileSync(file, JSON.stringify({ connections: [secret] }));
        await expect(readConfigFile(file)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

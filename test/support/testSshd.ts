/**
 * An sshd started by a test: Debian's openssh-server with its own config, host key, port and authorized
 * keys (made here with ssh-keygen), never the machine's sshd. Stop it with stop(); sessions() lists the
 * per-connection sshd processes it forked, so a test can see a tunnel's connection and kill it.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './testCluster';

const SSHD = '/usr/sbin/sshd';

export function sshdAvailable(): { available: boolean; reason: string } {
  if (!fs.existsSync(SSHD)) return { available: false, reason: `${SSHD} is missing (bash .ci/sshd.sh installs it)` };
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'pipe' });
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return { available: false, reason: 'ssh-keygen is missing' };
  }
  return { available: true, reason: '' };
}

export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

/** ssh-keygen -t ed25519 into dir/name; an empty passphrase leaves the key unencrypted. */
export function makeKey(dir: string, name: string, passphrase = ''): KeyPair {
  const privateKey = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', name, '-f', privateKey], {
    stdio: 'pipe',
  });
  return { privateKey, publicKey: `${privateKey}.pub` };
}

/** OpenSSH's own fingerprint of a public key file ("SHA256:..."). */
export function sshKeygenFingerprint(publicKey: string): string {
  const out = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', publicKey], { encoding: 'utf8' });
  const match = /(SHA256:\S+)/.exec(out);
  if (!match?.[1]) throw new Error(`no fingerprint in: ${out}`);
  return match[1];
}

export interface TestSshd {
  port: number;
  dir: string;
  user: string;
  hostKey: KeyPair;
  /** Authorized: a plain key and one encrypted with `passphrase`. */
  clientKey: KeyPair;
  encryptedKey: KeyPair;
  passphrase: string;
  /** The per-connection sshd processes (one per SSH connection logged in or logging in). */
  sessions(): number[];
  stop(): Promise<void>;
}

export async function startTestSshd(): Promise<TestSshd> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-sshd-'));
  const hostKey = makeKey(dir, 'host_ed25519');
  const clientKey = makeKey(dir, 'client');
  const passphrase = 'correct horse';
  const encryptedKey = makeKey(dir, 'client_encrypted', passphrase);
  const authorized = path.join(dir, 'authorized_keys');
  fs.writeFileSync(
    authorized,
    fs.readFileSync(clientKey.publicKey, 'utf8') + fs.readFileSync(encryptedKey.publicKey, 'utf8'),
    { mode: 0o600 },
  );
  const port = await freePort();
  const user = os.userInfo().username;
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey.privateKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'AllowTcpForwarding yes',
      'UsePAM no',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  // sshd's privilege separation needs this empty directory (Debian creates it when its own service starts).
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await waitListening(
    port,
    () => child.exitCode !== null,
    () => stderr,
  );
  const pid = child.pid ?? 0;
  const sessions = (): number[] => {
    try {
      return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  };
  return {
    port,
    dir,
    user,
    hostKey,
    clientKey,
    encryptedKey,
    passphrase,
    sessions,
    async stop() {
      for (const session of sessions()) {
        try {
          process.kill(session, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitListening(port: number, died: () => boolean, stderr: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (died()) throw new Error(`sshd exited: ${stderr()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`sshd did not listen on ${port}: ${stderr()}`);
}

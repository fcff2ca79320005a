/**
 * A PostgreSQL cluster started by a test (initdb into a temp folder, a port reserved for it, as the postgres
 * OS user when the test runs as root), with passwords required (scram-sha-256) and TLS from a test CA
 * made with openssl, so a test can prove a password or a certificate was really used. Stopped by stop().
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface TestCa {
  dir: string;
  /** CA certificate file. */
  caCert: string;
  caKey: string;
}

export interface TestCluster {
  port: number;
  dir: string;
  ca: TestCa;
  /** Superuser "postgres" with this password. */
  superPassword: string;
  stop(): void;
}

export function clusterToolsAvailable(): { available: boolean; reason: string } {
  for (const tool of [path.join(BIN, 'initdb'), path.join(BIN, 'pg_ctl'), '/usr/bin/openssl']) {
    if (!fs.existsSync(tool)) return { available: false, reason: `${tool} is missing` };
  }
  return { available: true, reason: '' };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const PORT_LOCKS = path.join(os.tmpdir(), 'pgagent-test-ports');

function lockHolderAlive(lock: string): boolean {
  const pid = Number(fs.readFileSync(lock, 'utf8'));
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether nothing listens on 127.0.0.1:`port` now. */
function portFreeNow(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port for a server of the test's own, kept until `release()`. Taken from 20000–29999, below the
 * ephemeral range (no client socket and no `listen(0)` is given it), free when chosen, and reserved by a lock
 * file (`wx`: one creator wins) against the other test files running at the same time, also while its server is
 * stopped and started again. A lock whose process is gone is taken over.
 */
export async function reservePort(): Promise<{ port: number; release: () => void }> {
  fs.mkdirSync(PORT_LOCKS, { recursive: true, mode: 0o1777 });
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const lock = path.join(PORT_LOCKS, String(port));
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    } catch {
      if (!lockHolderAlive(lock)) fs.rmSync(lock, { force: true });
      continue;
    }
    if (await portFreeNow(port)) return { port, release: () => fs.rmSync(lock, { force: true }) };
    fs.rmSync(lock, { force: true });
  }
  throw new Error(`no free port in 20000-29999 (locks in ${PORT_LOCKS})`);
}

function openssl(args: string[], cwd: string): void {
  execFileSync('/usr/bin/openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA (self-signed) in `dir`. */
export function makeCa(dir: string, name: string): TestCa {
  fs.mkdirSync(dir, { recursive: true });
  const caKey = path.join(dir, `${name}.key`);
  const caCert = path.join(dir, `${name}.crt`);
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      caKey,
      '-out',
      caCert,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ],
    dir,
  );
  return { dir, caCert, caKey };
}

/** A certificate signed by `ca` for `cn` with the given subjectAltName ("DNS:localhost"); returns [cert, key]. */
export function issueCert(ca: TestCa, name: string, cn: string, san?: string): [string, string] {
  const key = path.join(ca.dir, `${name}.key`);
  const csr = path.join(ca.dir, `${name}.csr`);
  const cert = path.join(ca.dir, `${name}.crt`);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${cn}`], ca.dir);
  const ext = path.join(ca.dir, `${name}.ext`);
  fs.writeFileSync(ext, san ? `subjectAltName=${san}\n` : 'basicConstraints=CA:FALSE\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.caCert,
      '-CAkey',
      ca.caKey,
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      '2',
      '-extfile',
      ext,
    ],
    ca.dir,
  );
  fs.chmodSync(key, 0o600);
  return [cert, key];
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL tool as the cluster's owner (the postgres OS user when the test runs as root). */
export function runAsClusterOwner(cmd: string, args: string[]): string {
  const [file, argv] = asRoot ? ['/usr/sbin/runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, { stdio: 'pipe', encoding: 'utf8' });
}

/**
 * initdb + start. The server's certificate names `serverNames` (e.g. "DNS:localhost"); pg_hba wants a
 * password for every TCP connection and a client certificate for the role `certuser`.
 */
export async function startTestCluster(options: { serverNames: string }): Promise<TestCluster> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pgagent-cluster-'));
  const dir = path.join(root, 'data');
  const ca = makeCa(path.join(root, 'ca'), 'Test CA');
  const [serverCert, serverKey] = issueCert(ca, 'server', 'localhost', options.serverNames);
  const superPassword = 'super-secret';
  const pwfile = path.join(root, 'pw');
  fs.writeFileSync(pwfile, `${superPassword}\n`);
  fs.chmodSync(root, 0o755);
  if (asRoot) execFileSync('chown', ['-R', 'postgres', root]);
  runAsClusterOwner(path.join(BIN, 'initdb'), [
    '-D',
    dir,
    '-U',
    'postgres',
    '--pwfile',
    pwfile,
    '-A',
    'scram-sha-256',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  const { port, release } = await reservePort();
  fs.appendFileSync(
    path.join(dir, 'postgresql.conf'),
    [
      `port = ${port}`,
      `listen_addresses = 'localhost'`,
      `unix_socket_directories = '${root}'`,
      'ssl = on',
      `ssl_cert_file = '${serverCert}'`,
      `ssl_key_file = '${serverKey}'`,
      `ssl_ca_file = '${ca.caCert}'`,
      'fsync = off',
      'shared_buffers = 16MB',
      'max_connections = 20',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(dir, 'pg_hba.conf'),
    ['local all all scram-sha-256', 'hostssl all certuser all cert', 'host all all all scram-sha-256', ''].join('\n'),
  );
  try {
    runAsClusterOwner(path.join(BIN, 'pg_ctl'), [
      '-D',
      dir,
      '-l',
      path.join(root, 'log'),
      '-w',
      '-o',
      '-c log_min_messages=warning',
      'start',
    ]);
  } catch (error) {
    release();
    throw error;
  }
  return {
    port,
    dir,
    ca,
    superPassword,
    stop() {
      try {
        runAsClusterOwner(path.join(BIN, 'pg_ctl'), ['-D', dir, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
        release();
      }
    },
  };
}

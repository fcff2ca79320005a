/**
 * libpq's sslmode and certificate files as Node TLS options: verify-ca checks the chain against
 * sslrootcert, verify-full also the host name; sslcert/sslkey give a client certificate; libpq's
 * default files under ~/.postgresql are used when they exist, and a key others can read is refused.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { AgentError } from '../platform/errors';
import { isErrno } from '../fs/errno';
import type { Env, ServerTarget } from './connectionTarget';

/** `false` for no TLS; otherwise the options `pg` hands to tls.connect. */
export type TlsSetting = false | ConnectionOptions;

/** libpq's default directory of certificate files (%APPDATA%\postgresql on Windows). */
function certDir(env: Env): string {
  return process.platform === 'win32'
    ? path.join(env.APPDATA ?? os.homedir(), 'postgresql')
    : path.join(env.HOME ?? os.homedir(), '.postgresql');
}

/** The CA file that verifies the server: sslrootcert, else ~/.postgresql/root.crt; "system" means the system's roots. */
export function rootCertFile(target: ServerTarget, env: Env): string {
  return target.sslrootcert ?? path.join(certDir(env), 'root.crt');
}

export function tlsOptions(target: ServerTarget, env: Env): TlsSetting {
  if (target.sslmode === 'disable') return false;
  const client = clientCertificate(target, env);
  const rootFile = rootCertFile(target, env);
  const verify = target.sslmode === 'verify-ca' || target.sslmode === 'verify-full';
  // libpq: with a root certificate file present, require (and prefer) verify the chain as verify-ca does.
  const rootExists = rootFile === 'system' || fileExists(rootFile);
  if (!verify && !rootExists) return { rejectUnauthorized: false, ...client };
  if (!rootExists) {
    throw new AgentError(
      'DB_SSL_VERIFY_FAILED',
      `sslmode=${target.sslmode} needs the CA certificate that signed the server's certificate, and the root certificate file "${rootFile}" does not exist.`,
      "Give the CA file with sslrootcert (in the connection, the URL or PGSSLROOTCERT), use sslrootcert=system for the system's trusted roots, or choose sslmode=require to skip verification.",
    );
  }
  const ca = rootFile === 'system' ? {} : { ca: readTlsFile(rootFile, 'root certificate') };
  const hostCheck = target.sslmode === 'verify-full' ? {} : { checkServerIdentity: () => undefined };
  return { rejectUnauthorized: true, ...ca, ...hostCheck, ...client };
}

/** Who the CA file names, for an error a person can act on: `"/path/ca.crt" (CN=Test CA)`. */
export function describeRootCert(target: ServerTarget, env: Env): string {
  const file = rootCertFile(target, env);
  if (file === 'system') return "the system's trusted roots";
  try {
    const subject = new crypto.X509Certificate(fs.readFileSync(file)).subject.replace(/\n/g, ', ');
    return `"${file}" (${subject})`;
  } catch {
    return `"${file}"`;
  }
}

function clientCertificate(target: ServerTarget, env: Env): Pick<ConnectionOptions, 'cert' | 'key'> {
  const certFile = target.sslcert ?? path.join(certDir(env), 'postgresql.crt');
  const keyFile = target.sslkey ?? path.join(certDir(env), 'postgresql.key');
  // libpq sends a client certificate only when its file is there; a named one that is missing is an error.
  if (!target.sslcert && !fileExists(certFile)) return {};
  const cert = readTlsFile(certFile, 'client certificate');
  checkKeyPermissions(keyFile);
  return { cert, key: readTlsFile(keyFile, 'client key') };
}

function checkKeyPermissions(file: string): void {
  if (process.platform === 'win32') return;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return; // readTlsFile reports a missing key
  }
  // libpq: a key owned by the user must be u=rw (0600) or less; one owned by root may be group-readable (0640).
  const allowed = stat.uid === 0 ? 0o037 : 0o077;
  if ((stat.mode & allowed) !== 0) {
    throw new AgentError(
      'CONFIG_INVALID',
      `The private key file "${file}" has group or world access; libpq refuses such a key and so do we.`,
      `Run: chmod 0600 "${file}"`,
    );
  }
}

function readTlsFile(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const why = isErrno(error, 'ENOENT') ? 'does not exist' : `cannot be read (${(error as Error).message})`;
    throw new AgentError(
      'CONFIG_INVALID',
      `The ${what} file "${file}" ${why}.`,
      'Check the path in sslrootcert / sslcert / sslkey (or PGSSLROOTCERT / PGSSLCERT / PGSSLKEY).',
    );
  }
}

function fileExists(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

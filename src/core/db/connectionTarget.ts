/**
 * Where to connect: a PostgreSQL server (from a URL, a libpq keyword/value string, the libpq PG*
 * environment, a pg_service.conf service or a named profile) or the embedded sample database. Resolving
 * touches no network; the only file it reads is libpq's service file, when a service is named.
 */
import { AgentError } from '../platform/errors';
import type { ConnParams, Env } from './conninfo';
import { isKeywordValueString, parseKeywordValue, parseUrlParams } from './conninfo';
import { readService } from './serviceFile';
import type { SshTunnelConfig } from './tunnel/sshConfig';
import type { IamAuth } from './iam/iamConfig';
import { describeHop, hopsOf } from './tunnel/sshConfig';

/** A saved connection: everything but the password, which lives in SecretStorage or the environment. */
export interface ConnectionProfile {
  name: string;
  host: string;
  port?: number;
  database: string;
  user: string;
  /** libpq sslmode; "disable" when absent. */
  sslmode?: SslMode;
  /** Files of libpq's TLS options: the CA that signs the server's certificate, a client certificate and its key. */
  sslrootcert?: string;
  sslcert?: string;
  sslkey?: string;
  /** Reach the server through this SSH tunnel (host and port are then as the SSH host sees them). */
  ssh?: SshTunnelConfig;
  /** Log in with a cloud IAM token instead of a password. */
  iam?: IamAuth;
}

export type SslMode = 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

export interface ServerTarget {
  kind: 'server';
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string;
  sslmode: SslMode;
  sslrootcert?: string;
  sslcert?: string;
  sslkey?: string;
  /** libpq's password file to look the password up in when none is given (else PGPASSFILE, else ~/.pgpass). */
  passfile?: string;
  /** The pg_service.conf service it came from, when one was named. */
  service?: string;
  ssh?: SshTunnelConfig;
  iam?: IamAuth;
  /** Profile name when it came from one; shown instead of the address. */
  profile?: string;
}

export interface SampleTarget {
  kind: 'sample';
}

export type ConnectionTarget = ServerTarget | SampleTarget;

export type { Env } from './conninfo';

export interface ResolveOptions {
  /** `--db`: a postgres:// URL, or "sample". */
  db?: string;
  /** A profile name (`--connection`, or the connection selected in VS Code). */
  profile?: string;
  profiles?: readonly ConnectionProfile[];
  /** Password of the profile, from SecretStorage or the environment. */
  profilePassword?: string;
  env: Env;
}

const LIBPQ_VARS = {
  PGHOST: 'host',
  PGPORT: 'port',
  PGDATABASE: 'dbname',
  PGUSER: 'user',
  PGPASSWORD: 'password',
  PGPASSFILE: 'passfile',
  PGSSLMODE: 'sslmode',
  PGSSLROOTCERT: 'sslrootcert',
  PGSSLCERT: 'sslcert',
  PGSSLKEY: 'sslkey',
  PGSERVICE: 'service',
} as const;

/** SPEC §6: --db, else DATABASE_URL, else libpq variables, else the embedded sample database. */
export function resolveTarget(options: ResolveOptions): ConnectionTarget {
  const { env } = options;
  if (options.db !== undefined && options.db !== '') {
    if (options.db === 'sample') return { kind: 'sample' };
    // A keyword/value string is libpq's own form: the environment fills what it leaves out, as in psql.
    if (isKeywordValueString(options.db)) return targetFromParams(parseKeywordValue(options.db), env, true);
    return parseConnectionUrl(options.db, env);
  }
  if (options.profile !== undefined) {
    const profile = options.profiles?.find((p) => p.name === options.profile);
    if (!profile) {
      const known = options.profiles?.map((p) => p.name).join(', ') || 'none';
      throw new AgentError(
        'PROFILE_NOT_FOUND',
        `No connection profile named "${options.profile}".`,
        `Known profiles: ${known}. Add one with "Postgres Agent: Add Connection…" or in .pgagent/config.json.`,
      );
    }
    return profileTarget(profile, options.profilePassword ?? env.PGPASSWORD);
  }
  if (env.DATABASE_URL) return parseConnectionUrl(env.DATABASE_URL, env);
  const named = Object.keys(LIBPQ_VARS).filter(
    (name) => env[name] !== undefined && name !== 'PGPASSWORD' && name !== 'PGPASSFILE',
  );
  if (named.length > 0) return targetFromParams({}, env, true);
  return { kind: 'sample' };
}

export function profileTarget(profile: ConnectionProfile, password?: string): ServerTarget {
  return {
    kind: 'server',
    host: profile.host,
    port: profile.port ?? 5432,
    database: profile.database,
    user: profile.user,
    ...(password ? { password } : {}),
    sslmode: profile.sslmode ?? 'disable',
    ...tlsFiles(profile),
    ...(profile.ssh ? { ssh: profile.ssh } : {}),
    ...(profile.iam ? { iam: profile.iam } : {}),
    profile: profile.name,
  };
}

/**
 * A URL names its database whole: the environment does not fill its gaps (a URL means the same on every
 * machine), except a `?service=` it names, read from the service files the environment points at, and the
 * password: a URL without one takes PGPASSWORD, as libpq does (how VS Code hands a profile's password to the
 * `pg-agent mcp` and `pg-agent guard` it launches: never on a command line); the URL's own password wins.
 */
export function parseConnectionUrl(url: string, env: Env = {}): ServerTarget {
  const target = targetFromParams(parseUrlParams(url), env, false);
  return target.password === undefined && env.PGPASSWORD ? { ...target, password: env.PGPASSWORD } : target;
}

/**
 * libpq's order: what was written explicitly, then the service it names (or PGSERVICE), then the PG*
 * environment (when `envDefaults`), then the defaults.
 */
function targetFromParams(explicit: ConnParams, env: Env, envDefaults: boolean): ServerTarget {
  const fromEnv: ConnParams = {};
  if (envDefaults) {
    for (const [name, keyword] of Object.entries(LIBPQ_VARS)) {
      const value = env[name];
      if (value !== undefined && value !== '') fromEnv[keyword] = value;
    }
  }
  const serviceName = explicit.service ?? fromEnv.service;
  const fromService = serviceName ? readService(serviceName, env) : {};
  const p: ConnParams = { ...fromEnv, ...fromService, ...explicit };
  const user = p.user ?? (envDefaults ? env.USER : undefined) ?? 'postgres';
  const source = serviceName ? `service "${serviceName}"` : 'the connection settings';
  return {
    kind: 'server',
    host: p.host || 'localhost',
    port: parsePort(p.port ?? '5432', source),
    database: p.dbname || user,
    user,
    ...(p.password ? { password: p.password } : {}),
    sslmode: parseSslMode(p.sslmode ?? 'disable', source),
    ...tlsFiles(p),
    ...(p.passfile ? { passfile: p.passfile } : {}),
    ...(serviceName ? { service: serviceName } : {}),
  };
}

function tlsFiles(p: {
  sslrootcert?: string | undefined;
  sslcert?: string | undefined;
  sslkey?: string | undefined;
}): Pick<ServerTarget, 'sslrootcert' | 'sslcert' | 'sslkey'> {
  return {
    ...(p.sslrootcert ? { sslrootcert: p.sslrootcert } : {}),
    ...(p.sslcert ? { sslcert: p.sslcert } : {}),
    ...(p.sslkey ? { sslkey: p.sslkey } : {}),
  };
}

/** How a target is shown to a person; never includes the password. */
export function describeTarget(target: ConnectionTarget): string {
  if (target.kind === 'sample') return 'sample (PGlite)';
  const tunnel = target.ssh ? ` via ssh ${hopsOf(target.ssh).map(describeHop).join(' → ')}` : '';
  const address = `${target.user}@${target.host}:${target.port}/${target.database}${tunnel}`;
  const name = target.profile ?? (target.service ? `service ${target.service}` : undefined);
  return name ? `${name} (${address})` : address;
}

function parsePort(value: string, source: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new AgentError('CONFIG_INVALID', `Invalid port "${value}" in ${source}.`, 'Use a number from 1 to 65535.');
  }
  return port;
}

const SSL_MODES: readonly SslMode[] = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'];

function parseSslMode(value: string, source: string): SslMode {
  if (value === 'allow') return 'prefer';
  const mode = SSL_MODES.find((m) => m === value);
  if (!mode) {
    throw new AgentError(
      'CONFIG_INVALID',
      `Unknown sslmode "${value}" in ${source}.`,
      `Use one of: ${SSL_MODES.join(', ')}.`,
    );
  }
  return mode;
}

/**
 * A stable, password-free key for the database a target names: approval tickets are bound to it, so
 * a ticket approved for one database is never executed on another.
 */
export function connectionKey(target: ConnectionTarget, sampleDbDir: string): string {
  if (target.kind === 'sample') return `sample:${sampleDbDir}`;
  const key = `postgres://${encodeURIComponent(target.user)}@${target.host}:${target.port}/${encodeURIComponent(target.database)}`;
  // 127.0.0.1:5432 behind one bastion is not 127.0.0.1:5432 behind another, nor this machine's: the route is
  // part of the key, as an option no URL parser here accepts, so nothing connects to such a key directly.
  return target.ssh ? `${key}?ssh=${encodeURIComponent(hopsOf(target.ssh).map(describeHop).join(','))}` : key;
}

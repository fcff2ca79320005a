/**
 * Where to connect: a PostgreSQL server (from a URL, the libpq PG* environment or a named profile) or
 * the embedded sample database. Pure: resolving touches no network and no disk.
 */
import { AgentError } from '../platform/errors';

/** A saved connection: everything but the password, which lives in SecretStorage or the environment. */
export interface ConnectionProfile {
  name: string;
  host: string;
  port?: number;
  database: string;
  user: string;
  /** libpq sslmode; "disable" when absent. */
  sslmode?: SslMode;
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
  /** Profile name when it came from one; shown instead of the address. */
  profile?: string;
}

export interface SampleTarget {
  kind: 'sample';
}

export type ConnectionTarget = ServerTarget | SampleTarget;

export type Env = Readonly<Record<string, string | undefined>>;

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

const LIBPQ_VARS = ['PGHOST', 'PGPORT', 'PGDATABASE', 'PGUSER', 'PGPASSWORD', 'PGSSLMODE'] as const;

/** SPEC §6: --db, else DATABASE_URL, else libpq variables, else the embedded sample database. */
export function resolveTarget(options: ResolveOptions): ConnectionTarget {
  const { env } = options;
  if (options.db !== undefined && options.db !== '') {
    return options.db === 'sample' ? { kind: 'sample' } : parseConnectionUrl(options.db);
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
  if (env.DATABASE_URL) return parseConnectionUrl(env.DATABASE_URL);
  if (LIBPQ_VARS.some((name) => env[name] !== undefined && name !== 'PGPASSWORD')) return libpqTarget(env);
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
    profile: profile.name,
  };
}

function libpqTarget(env: Env): ServerTarget {
  const user = env.PGUSER ?? env.USER ?? 'postgres';
  return {
    kind: 'server',
    host: env.PGHOST ?? 'localhost',
    port: parsePort(env.PGPORT ?? '5432', 'PGPORT'),
    database: env.PGDATABASE ?? user,
    user,
    ...(env.PGPASSWORD ? { password: env.PGPASSWORD } : {}),
    sslmode: parseSslMode(env.PGSSLMODE ?? 'disable', 'PGSSLMODE'),
  };
}

export function parseConnectionUrl(url: string): ServerTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidUrl(url, 'it is not a URL');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw invalidUrl(url, `the scheme is "${parsed.protocol}", not postgres:`);
  }
  const user = decodeURIComponent(parsed.username) || 'postgres';
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user;
  const password = decodeURIComponent(parsed.password);
  return {
    kind: 'server',
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost',
    port: parsed.port ? parsePort(parsed.port, 'the URL port') : 5432,
    database,
    user,
    ...(password ? { password } : {}),
    sslmode: parseSslMode(parsed.searchParams.get('sslmode') ?? 'disable', 'sslmode'),
  };
}

/** How a target is shown to a person; never includes the password. */
export function describeTarget(target: ConnectionTarget): string {
  if (target.kind === 'sample') return 'sample (PGlite)';
  const address = `${target.user}@${target.host}:${target.port}/${target.database}`;
  return target.profile ? `${target.profile} (${address})` : address;
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

function invalidUrl(url: string, why: string): AgentError {
  const shown = url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  return new AgentError(
    'CONFIG_INVALID',
    `Cannot use "${shown}" as a database URL: ${why}.`,
    'Write it as postgres://user:password@host:5432/database.',
  );
}

/**
 * A stable, password-free key for the database a target names: approval tickets are bound to it, so
 * a ticket approved for one database is never executed on another.
 */
export function connectionKey(target: ConnectionTarget, sampleDbDir: string): string {
  if (target.kind === 'sample') return `sample:${sampleDbDir}`;
  return `postgres://${encodeURIComponent(target.user)}@${target.host}:${target.port}/${encodeURIComponent(target.database)}`;
}

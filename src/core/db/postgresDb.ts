/** The Db interface over a PostgreSQL server, with a small `pg` pool. */
import pg from 'pg';
import type { Logger } from '../platform/logger';
import type { Db, DbResult, DbSession, DbTextResult, TunnelStatus } from './db';
import type { Env, ServerTarget } from './connectionTarget';
import { lookupPgpass } from './pgpass';
import type { TlsSetting } from './tlsOptions';
import { tlsOptions } from './tlsOptions';
import type { TunnelDeps } from './tunnel/sshHop';
import { acquireTunnel } from './tunnel/sshTunnel';
import { TunnelSocket } from './tunnel/tunnelSocket';
import type { IamTokenDeps } from './iam/iamToken';
import { iamPasswordSource } from './iam/iamToken';

/** What an SSH tunnel needs from the caller (CLI: the terminal; VS Code: its prompts and SecretStorage). */
export type SshOptions = Pick<TunnelDeps, 'knownHostsFile' | 'confirmHostKey' | 'secret' | 'readyTimeoutMs'>;
import { describeTarget } from './connectionTarget';
import { connectionError, queryError } from './dbErrors';
import { AgentError } from '../platform/errors';
import { resetSession } from './sessionReset';

export interface PostgresOptions {
  connectTimeoutMs?: number;
  maxConnections?: number;
  logger: Logger;
  /** Where libpq's files are found (HOME, PGPASSFILE, ...); process.env when absent. */
  env?: Env;
  /** Needed when the target has an SSH tunnel. */
  ssh?: SshOptions;
  /** How IAM tokens are made (tests give a stand-in SDK and clock). */
  iam?: IamTokenDeps;
}

/** Connects (checking the server answers) and returns a Db; connection failures are typed AgentErrors. */
export async function openPostgres(given: ServerTarget, options: PostgresOptions): Promise<Db> {
  const env = options.env ?? process.env;
  const target = withPasswordFile(given, env, options.logger);
  try {
    return await openWithSsl(target, options, tlsOptions(target, env));
  } catch (error) {
    const mapped = connectionError(error, target, env);
    // libpq's "prefer": SSL when the server has it, plain otherwise.
    if (target.sslmode === 'prefer' && mapped.code === 'DB_SSL_UNSUPPORTED') {
      return openWithSsl(target, options, false).catch((e: unknown) => {
        throw connectionError(e, target, env);
      });
    }
    throw mapped;
  }
}

async function openWithSsl(target: ServerTarget, options: PostgresOptions, ssl: TlsSetting): Promise<Db> {
  const label = describeTarget(target);
  const lease = target.ssh ? await openTunnel(target, options, label) : undefined;
  const pool = new pg.Pool({
    host: target.host,
    port: target.port,
    database: target.database,
    user: target.user,
    // An explicit empty password keeps `pg` from falling back to PGPASSWORD behind our back. An IAM
    // profile's password is a token, made (or reused while it is fresh) for each new connection.
    password: target.iam ? iamPasswordSource(target.iam, target, options.iam) : (target.password ?? ''),
    ssl,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    application_name: 'postgres-agent',
    // The server must read SQL text exactly as our parser did: with standard_conforming_strings off, a
    // backslash in a string would end it elsewhere and let text we saw as a literal run as statements.
    // Startup options take precedence over ALTER DATABASE/ROLE ... SET defaults.
    options: '-c standard_conforming_strings=on -c client_encoding=UTF8',
    // Through a tunnel, each connection is an SSH channel to host:port as the SSH host sees it.
    ...(lease ? { stream: () => new TunnelSocket(lease.tunnel, label) } : {}),
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', (error) =>
    options.logger.warn('idle database connection failed', { db: label, error: error.message }),
  );
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    lease?.release();
    throw error;
  }
  options.logger.info('connected', { db: label });
  return new PostgresDb(pool, label, lease);
}

/**
 * The shared tunnel of the target's route, opened before the pool: a host key to accept or a passphrase to
 * type waits for the person, not for the pool's connect timeout.
 */
async function openTunnel(target: ServerTarget, options: PostgresOptions, label: string): Promise<TunnelLease> {
  const ssh = target.ssh;
  if (!ssh) throw new AgentError('INTERNAL', 'openTunnel without ssh settings');
  if (!options.ssh) {
    throw new AgentError(
      'CONFIG_INVALID',
      `${label} goes through an SSH tunnel, and this caller cannot open one (no known_hosts file given).`,
      'Open it from pg-agent or VS Code.',
    );
  }
  const lease = acquireTunnel(ssh, {
    ...options.ssh,
    env: options.env ?? process.env,
    logger: options.logger,
    ...(ssh.keepAliveSeconds ? { keepAliveSeconds: ssh.keepAliveSeconds } : {}),
  });
  try {
    await lease.tunnel.open();
  } catch (error) {
    lease.release();
    throw error;
  }
  return lease;
}

type TunnelLease = ReturnType<typeof acquireTunnel>;

/**
 * libpq's sslmode and certificate files as `pg`'s ssl option, for a connection made elsewhere (the
 * guard's own upstream sessions): the same rules as every pool here (tlsOptions.ts).
 */
export function sslOption(target: ServerTarget, env: Env = process.env): TlsSetting {
  return tlsOptions(target, env);
}

/** libpq's order: a password given (URL, profile, PGPASSWORD) wins; else the password file's matching line. */
function withPasswordFile(target: ServerTarget, env: Env, logger: Logger): ServerTarget {
  if (target.password !== undefined || target.iam) return target;
  const lookup = lookupPgpass(target, env, target.passfile);
  if (lookup.found) {
    logger.debug('password from the password file', { db: describeTarget(target), file: lookup.file });
    return { ...target, password: lookup.password };
  }
  if (lookup.warning) logger.warn(`WARNING: ${lookup.warning}`, { db: describeTarget(target) });
  return target;
}

class PostgresDb implements Db {
  readonly kind = 'postgres' as const;

  readonly tunnel?: TunnelStatus;

  constructor(
    private readonly pool: pg.Pool,
    readonly label: string,
    private readonly lease?: TunnelLease,
  ) {
    if (lease) this.tunnel = lease.tunnel;
  }

  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<DbResult<Row>> {
    return runQuery<Row>(this.pool, sql, params, this.label);
  }

  queryText(sql: string, params?: readonly unknown[]): Promise<DbTextResult> {
    return runTextQuery(this.pool, sql, params, this.label);
  }

  async withSession<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw queryError(error, this.label);
    }
    // A server that ends the connection while it is checked out emits 'error' on the client, which
    // would crash the process unhandled; the session's next query reports it instead.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    const noteBroken = (error: unknown): never => {
      if (error instanceof AgentError && (error.code === 'DB_UNREACHABLE' || error.code.startsWith('SSH_')))
        broken ??= error;
      throw error;
    };
    const session: DbSession = {
      query: <Row>(sql: string, params?: readonly unknown[]) =>
        runQuery<Row>(client, sql, params, this.label).catch(noteBroken),
      queryText: (sql: string, params?: readonly unknown[]) =>
        runTextQuery(client, sql, params, this.label).catch(noteBroken),
    };
    try {
      return await work(session);
    } finally {
      // Nothing the session's SQL (or the database code it ran) did may reach the next user of the connection.
      if (!broken) broken = await resetSession(session);
      client.off('error', onError);
      // A session whose connection died is destroyed rather than returned to the pool.
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    try {
      await this.pool.end();
    } finally {
      this.lease?.release();
    }
  }
}

/** Every type parser returns the text PostgreSQL sent. */
const TEXT_TYPES = { getTypeParser: () => (value: string) => value };

async function runTextQuery(
  runner: pg.Pool | pg.PoolClient,
  sql: string,
  params: readonly unknown[] | undefined,
  label: string,
): Promise<DbTextResult> {
  try {
    const result = await runner.query<(string | null)[]>({
      text: sql,
      ...(params ? { values: [...params] } : {}),
      rowMode: 'array',
      types: TEXT_TYPES,
    });
    return {
      fields: result.fields.map((f) => ({
        name: f.name,
        dataTypeID: f.dataTypeID,
        tableID: f.tableID,
        columnID: f.columnID,
        dataTypeSize: f.dataTypeSize,
        dataTypeModifier: f.dataTypeModifier,
      })),
      rows: result.rows,
      rowCount: result.rowCount,
    };
  } catch (error) {
    throw queryError(error, label);
  }
}

async function runQuery<Row>(
  runner: pg.Pool | pg.PoolClient,
  sql: string,
  params: readonly unknown[] | undefined,
  label: string,
): Promise<DbResult<Row>> {
  try {
    const result = await runner.query(sql, params ? [...params] : undefined);
    return {
      fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
      rows: result.rows as Row[],
      rowCount: result.rowCount,
    };
  } catch (error) {
    throw queryError(error, label);
  }
}

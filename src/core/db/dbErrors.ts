/**
 * Turns driver errors into AgentErrors a person can act on: one code and one piece of advice for each
 * way a connection fails, and PostgreSQL's own SQLSTATE, message and position for a failed query.
 */
import { AgentError } from '../platform/errors';
import type { Env, ServerTarget } from './connectionTarget';
import { describeTarget } from './connectionTarget';
import { describeRootCert } from './tlsOptions';
import { describeIam } from './iam/iamConfig';

/** A query PostgreSQL refused; `sqlState` is its five-character code (42P01, 23503, ...). */
export class DbQueryError extends AgentError {
  constructor(
    message: string,
    readonly sqlState: string,
    /** 1-based character position in the statement, when PostgreSQL gives one. */
    readonly position?: number,
    readonly detail?: string,
    readonly hint?: string,
    options?: { cause?: unknown },
  ) {
    super('DB_QUERY_FAILED', message, hint, options);
  }
}

interface DriverErrorShape {
  code?: unknown;
  message?: unknown;
  position?: unknown;
  detail?: unknown;
  hint?: unknown;
}

function shape(error: unknown): DriverErrorShape {
  return typeof error === 'object' && error !== null ? error : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const EDIT_HINT = 'Check it in "Postgres Agent: Add Connection…" or the --db URL.';

/** A failure to open a connection to a server, as one of the DB_* connection codes. */
export function connectionError(error: unknown, target: ServerTarget, env: Env = process.env): AgentError {
  if (error instanceof AgentError) return error;
  const verify = tlsVerifyError(error, target, env);
  if (verify) return verify;
  const { code, message: rawMessage } = shape(error);
  const message = text(rawMessage) ?? String(error);
  const where = `${target.host}:${target.port}`;
  const who = describeTarget(target);
  const options = { cause: error };

  switch (code) {
    case 'ECONNREFUSED':
      return new AgentError(
        'DB_UNREACHABLE',
        `Cannot reach ${where} (connection refused).`,
        `Is the server running and listening there? ${EDIT_HINT}`,
        options,
      );
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new AgentError(
        'DB_UNREACHABLE',
        `Cannot reach ${where} (${code === 'ETIMEDOUT' ? 'timed out' : 'no route to host'}).`,
        `Is the host up and is a firewall or VPN in the way? ${EDIT_HINT}`,
        options,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new AgentError(
        'DB_HOST_NOT_FOUND',
        `The host name "${target.host}" could not be resolved.`,
        `Check the spelling of the host. ${EDIT_HINT}`,
        options,
      );
    case '28P01':
      if (target.iam) {
        return new AgentError(
          'DB_TOKEN_FAILED',
          `${where} refused the ${describeIam(target.iam)} token of user "${target.user}".`,
          target.iam.provider === 'aws-rds'
            ? 'The token may have expired, or the user lacks the rds_iam role, or IAM authentication is off on the instance; check the region and host too (the token is signed for them).'
            : 'The token may have expired, or the user is not an Entra ID principal of the server (pgaadauth_create_principal).',
          options,
        );
      }
      return new AgentError(
        'DB_AUTH_FAILED',
        `The server refused the password of user "${target.user}" on ${where}.`,
        target.profile
          ? `Set the password again with "Postgres Agent: Add Connection…" (it is kept in VS Code's secret storage).`
          : 'Check the password in the URL or PGPASSWORD.',
        options,
      );
    case '3D000':
      return new AgentError(
        'DB_NOT_FOUND',
        `The database "${target.database}" does not exist on ${where}.`,
        'Check the database name; `psql -l` lists the ones there.',
        options,
      );
    case '28000':
      if (/SSL off|no encryption/i.test(message)) {
        return new AgentError(
          'DB_SSL_REQUIRED',
          `${where} only accepts encrypted connections (${message}).`,
          'Connect with sslmode=require (add ?sslmode=require to the URL, or choose SSL in the connection).',
          options,
        );
      }
      if (/role .* does not exist/i.test(message)) {
        return new AgentError(
          'DB_ROLE_NOT_FOUND',
          `The user "${target.user}" does not exist on ${where}.`,
          `Check the user name. ${EDIT_HINT}`,
          options,
        );
      }
      return new AgentError(
        'DB_AUTH_FAILED',
        `${where} refused the connection of "${target.user}": ${message}`,
        "The server's pg_hba.conf does not allow this user, database or address; ask its administrator.",
        options,
      );
    default:
      break;
  }
  if (/client password must be a (non-empty )?string/i.test(message) && !target.password) {
    return new AgentError(
      'DB_AUTH_FAILED',
      `${where} wants a password for user "${target.user}", and none was given.`,
      target.profile
        ? 'Set the password with "Postgres Agent: Add Connection…", or put it in ~/.pgpass (mode 0600).'
        : 'Give it in the URL, PGPASSWORD, or a line of ~/.pgpass (mode 0600; PGPASSFILE names another file).',
      options,
    );
  }
  if (/does not support SSL/i.test(message)) {
    return new AgentError(
      'DB_SSL_UNSUPPORTED',
      `${where} does not accept SSL connections, and sslmode=${target.sslmode} requires one.`,
      'Use sslmode=disable or prefer for this server, or enable SSL on it.',
      options,
    );
  }
  if (/timeout/i.test(message)) {
    return new AgentError(
      'DB_UNREACHABLE',
      `Cannot reach ${where} (timed out while connecting).`,
      `Is the host up and is a firewall or VPN in the way? ${EDIT_HINT}`,
      options,
    );
  }
  return new AgentError('DB_CONNECT_FAILED', `Cannot connect to ${who}: ${message}`, EDIT_HINT, options);
}

/** Node's codes for a server certificate that verify-ca / verify-full rejected. */
const CHAIN_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/** A certificate verification failure, naming the host, the names the certificate has and the CA it was checked against. */
function tlsVerifyError(error: unknown, target: ServerTarget, env: Env): AgentError | undefined {
  const { code } = shape(error);
  if (typeof code !== 'string') return undefined;
  const where = `${target.host}:${target.port}`;
  const options = { cause: error };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const cert = (error as { cert?: { subjectaltname?: unknown; subject?: { CN?: unknown } } }).cert;
    const names =
      typeof cert?.subjectaltname === 'string'
        ? cert.subjectaltname
        : typeof cert?.subject?.CN === 'string'
          ? `CN=${cert.subject.CN}`
          : 'other names';
    return new AgentError(
      'DB_SSL_VERIFY_FAILED',
      `The server's certificate is not for "${target.host}": it names ${names} (sslmode=verify-full checks the host name).`,
      `Connect with a host name the certificate names, or, if you trust this server's CA (${describeRootCert(target, env)}) but not its names, use sslmode=verify-ca.`,
      options,
    );
  }
  if (CHAIN_CODES.has(code)) {
    return new AgentError(
      'DB_SSL_VERIFY_FAILED',
      `The certificate of ${where} is not signed by the CA in ${describeRootCert(target, env)} (${code}).`,
      "Point sslrootcert (or PGSSLROOTCERT) at the CA that signed the server's certificate; ask the server's administrator which one that is.",
      options,
    );
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return new AgentError(
      'DB_SSL_VERIFY_FAILED',
      `The certificate of ${where} is ${code === 'CERT_HAS_EXPIRED' ? 'expired' : 'not valid yet'}.`,
      "The server's administrator must renew it (or check this machine's clock).",
      options,
    );
  }
  return undefined;
}

/** A failed query: PostgreSQL's error with its SQLSTATE, or a lost connection. */
export function queryError(error: unknown, label: string): AgentError {
  if (error instanceof AgentError) return error;
  const s = shape(error);
  const message = text(s.message) ?? String(error);
  const sqlState = text(s.code);
  // Class 08 (connection exception) and 57P01-57P03 (server shutting down, restarting) end the session.
  const connectionLost = sqlState !== undefined && /^(08...|57P0[123])$/.test(sqlState);
  if (sqlState && /^[0-9A-Z]{5}$/.test(sqlState) && !connectionLost) {
    const position = Number(s.position);
    return new DbQueryError(
      message,
      sqlState,
      Number.isInteger(position) && position > 0 ? position : undefined,
      text(s.detail),
      text(s.hint),
      { cause: error },
    );
  }
  if (connectionLost || /Connection terminated|ECONNRESET|EPIPE|not queryable/i.test(`${message} ${sqlState ?? ''}`)) {
    return new AgentError(
      'DB_UNREACHABLE',
      `The connection to ${label} was lost: ${message}`,
      'Nothing was committed. Check that the server is up, then try again.',
      { cause: error },
    );
  }
  return new AgentError('DB_QUERY_FAILED', message, undefined, { cause: error });
}

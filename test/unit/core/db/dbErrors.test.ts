// The connection failures that this machine's trust-auth server cannot produce for real (bad password,
// SSL required) are checked here with the error shapes `pg` gives; the rest are produced for real in
// test/integration/postgresDb.test.ts.
import { describe, expect, it } from 'vitest';
import type { ServerTarget } from '../../../../src/core/db/connectionTarget';
import { connectionError, DbQueryError, queryError } from '../../../../src/core/db/dbErrors';

const target: ServerTarget = {
  kind: 'server',
  host: 'db.example.com',
  port: 5432,
  database: 'shop',
  user: 'app',
  sslmode: 'disable',
};

function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

describe('connectionError', () => {
  it.each([
    [
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'DB_UNREACHABLE',
      'connection refused',
    ],
    [
      Object.assign(new Error('getaddrinfo ENOTFOUND db.example.com'), { code: 'ENOTFOUND' }),
      'DB_HOST_NOT_FOUND',
      'could not be resolved',
    ],
    [pgError('28P01', 'password authentication failed for user "app"'), 'DB_AUTH_FAILED', 'refused the password'],
    [pgError('3D000', 'database "shop" does not exist'), 'DB_NOT_FOUND', '"shop" does not exist'],
    [
      pgError('28000', 'no pg_hba.conf entry for host "10.0.0.1", user "app", database "shop", no encryption'),
      'DB_SSL_REQUIRED',
      'only accepts encrypted',
    ],
    [
      pgError('28000', 'no pg_hba.conf entry for host "10.0.0.1", user "app", database "shop", SSL off'),
      'DB_SSL_REQUIRED',
      'only accepts encrypted',
    ],
    [pgError('28000', 'role "app" does not exist'), 'DB_ROLE_NOT_FOUND', 'does not exist'],
    [new Error('The server does not support SSL connections'), 'DB_SSL_UNSUPPORTED', 'does not accept SSL'],
    [new Error('Connection terminated due to connection timeout'), 'DB_UNREACHABLE', 'timed out'],
  ])('maps %s to %s', (error, code, fragment) => {
    const mapped = connectionError(error, target);
    expect(mapped.code).toBe(code);
    expect(mapped.message).toContain(fragment);
    expect(mapped.advice).toBeTruthy();
    expect(mapped.cause).toBe(error);
  });

  it('gives each failure its own advice', () => {
    const refused = connectionError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), target);
    const ssl = connectionError(pgError('28000', 'no encryption'), target);
    const password = connectionError(pgError('28P01', 'password authentication failed'), {
      ...target,
      profile: 'staging',
    });
    expect(ssl.advice).toContain('sslmode=require');
    expect(password.advice).toContain('secret storage');
    expect(new Set([refused.advice, ssl.advice, password.advice]).size).toBe(3);
  });
});

describe('queryError', () => {
  it('keeps the SQLSTATE and the position PostgreSQL reports', () => {
    const error = Object.assign(new Error('relation "nope" does not exist'), { code: '42P01', position: '15' });
    const mapped = queryError(error, 'test');
    expect(mapped).toBeInstanceOf(DbQueryError);
    expect(mapped).toMatchObject({ code: 'DB_QUERY_FAILED', sqlState: '42P01', position: 15 });
  });

  it('reports a lost connection as DB_UNREACHABLE and says nothing was committed', () => {
    const mapped = queryError(new Error('Connection terminated unexpectedly'), 'app@h:5432/d');
    expect(mapped.code).toBe('DB_UNREACHABLE');
    expect(mapped.advice).toContain('Nothing was committed');
  });

  it.each(['57P01', '08006'])('treats SQLSTATE %s (connection ended by the server) as DB_UNREACHABLE', (code) => {
    const error = Object.assign(new Error('terminating connection due to administrator command'), { code });
    expect(queryError(error, 'x').code).toBe('DB_UNREACHABLE');
  });
});

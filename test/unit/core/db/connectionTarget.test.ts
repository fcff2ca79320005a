import { describe, expect, it } from 'vitest';
import { describeTarget, parseConnectionUrl, resolveTarget } from '../../../../src/core/db/connectionTarget';
import { AgentError } from '../../../../src/core/platform/errors';

const profiles = [
  { name: 'staging', host: 'db.internal', port: 6543, database: 'shop', user: 'app', sslmode: 'require' as const },
];

describe('resolveTarget', () => {
  it('uses --db over everything else', () => {
    const target = resolveTarget({
      db: 'postgres://u:p@h:1234/d',
      env: { DATABASE_URL: 'postgres://x@y/z', PGHOST: 'other' },
    });
    expect(target).toEqual({
      kind: 'server',
      host: 'h',
      port: 1234,
      database: 'd',
      user: 'u',
      password: 'p',
      sslmode: 'disable',
    });
  });

  it('treats --db sample as the embedded database', () => {
    expect(resolveTarget({ db: 'sample', env: { DATABASE_URL: 'postgres://x@y/z' } })).toEqual({ kind: 'sample' });
  });

  it('falls back to DATABASE_URL, then libpq variables, then the sample database', () => {
    expect(resolveTarget({ env: { DATABASE_URL: 'postgresql://a@b/c', PGHOST: 'ignored' } })).toMatchObject({
      host: 'b',
      database: 'c',
      user: 'a',
    });
    expect(
      resolveTarget({
        env: { PGHOST: 'pg.local', PGPORT: '5433', PGUSER: 'me', PGPASSWORD: 's3cret', PGSSLMODE: 'require' },
      }),
    ).toEqual({
      kind: 'server',
      host: 'pg.local',
      port: 5433,
      database: 'me',
      user: 'me',
      password: 's3cret',
      sslmode: 'require',
    });
    expect(resolveTarget({ env: { PGPASSWORD: 'only a password' } })).toEqual({ kind: 'sample' });
    expect(resolveTarget({ env: {} })).toEqual({ kind: 'sample' });
  });

  it('resolves a named profile with its password from secret storage', () => {
    const target = resolveTarget({ profile: 'staging', profiles, profilePassword: 'pw', env: {} });
    expect(target).toEqual({
      kind: 'server',
      host: 'db.internal',
      port: 6543,
      database: 'shop',
      user: 'app',
      password: 'pw',
      sslmode: 'require',
      profile: 'staging',
    });
    expect(describeTarget(target)).toBe('staging (app@db.internal:6543/shop)');
  });

  it('names the known profiles when one is missing', () => {
    const error = (() => {
      try {
        resolveTarget({ profile: 'prod', profiles, env: {} });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('PROFILE_NOT_FOUND');
    expect((error as AgentError).advice).toContain('staging');
  });
});

describe('parseConnectionUrl', () => {
  it('decodes escaped credentials and database names', () => {
    expect(parseConnectionUrl('postgres://us%40er:p%2Fw@[::1]:5432/my%20db?sslmode=verify-full')).toMatchObject({
      user: 'us@er',
      password: 'p/w',
      host: '::1',
      database: 'my db',
      sslmode: 'verify-full',
    });
  });

  it.each([
    ['not a url', 'it is not a URL'],
    ['mysql://u@h/d', 'scheme'],
    ['postgres://u@h:99999/d', 'Invalid URL'],
    ['postgres://u@h/d?sslmode=sometimes', 'Unknown sslmode'],
  ])('rejects %s with CONFIG_INVALID', (url, fragment) => {
    try {
      parseConnectionUrl(url);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('CONFIG_INVALID');
      expect(`${(error as AgentError).message}`).toContain(fragment === 'Invalid URL' ? 'not a URL' : fragment);
    }
  });

  it('never shows the password in an error', () => {
    try {
      parseConnectionUrl('mysql://user:hunter2@h/d');
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2');
    }
  });
});

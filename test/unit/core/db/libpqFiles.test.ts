import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKeywordValueString, parseKeywordValue, parseUrlParams } from '../../../../src/core/db/conninfo';
import { resolveTarget } from '../../../../src/core/db/connectionTarget';
import { lookupPgpass, matchPgpass, pgpassFileName } from '../../../../src/core/db/pgpass';
import { serviceInText } from '../../../../src/core/db/serviceFile';
import { thrownBy } from '../../../support/agentErrors';

describe('libpq keyword/value strings and URL options', () => {
  it('reads quoted values with escapes, and tells a keyword string from a URL', () => {
    expect(parseKeywordValue(`host=db.example.com  dbname = 'my db' password='it\\'s' user=a\\ b`)).toEqual({
      host: 'db.example.com',
      dbname: 'my db',
      password: "it's",
      user: 'a b',
    });
    expect(isKeywordValueString('service=prod')).toBe(true);
    expect(isKeywordValueString('postgresql:///?service=prod')).toBe(false);
    expect(isKeywordValueString('sample')).toBe(false);
  });

  it('refuses an unknown keyword by name, and a string that is not keyword=value', () => {
    expect(thrownBy(() => parseKeywordValue('host=h sslmod=require')).message).toContain('"sslmod"');
    expect(thrownBy(() => parseKeywordValue('host=h junk')).code).toBe('CONFIG_INVALID');
    expect(thrownBy(() => parseKeywordValue("host='h")).message).toContain('unterminated');
  });

  it('reads TLS files and a service from a URL query', () => {
    expect(
      parseUrlParams('postgresql://u@h/d?sslmode=verify-full&sslrootcert=/ca.crt&service=prod&application_name=x'),
    ).toEqual({
      user: 'u',
      host: 'h',
      dbname: 'd',
      sslmode: 'verify-full',
      sslrootcert: '/ca.crt',
      service: 'prod',
    });
  });
});

describe('pg_service.conf', () => {
  const text = `# comment\n[other]\nhost=elsewhere\n\n[prod]\nhost = db.prod.internal\nport=6543\ndbname=shop\nuser=app\nsslmode=verify-full\n[later]\nhost=x\n`;

  it('reads one section, trimmed, and nothing of the others', () => {
    expect(serviceInText(text, 'prod', 'f')).toEqual({
      host: 'db.prod.internal',
      port: '6543',
      dbname: 'shop',
      user: 'app',
      sslmode: 'verify-full',
    });
    expect(serviceInText(text, 'missing', 'f')).toBeUndefined();
  });

  it('refuses a nested service and a line without =, naming the file and line', () => {
    expect(thrownBy(() => serviceInText('[a]\nservice=b\n', 'a', '/s.conf')).message).toMatch(
      /nested services.*|line 2/,
    );
    const bad = thrownBy(() => serviceInText('[a]\nhost\n', 'a', '/s.conf'));
    expect(bad.message).toContain('/s.conf, line 2');
  });
});

describe('resolving services from files', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgsvc-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--db service=NAME, a URL ?service=, and PGSERVICE all resolve the service; what is written explicitly wins', () => {
    const file = path.join(dir, 'services.conf');
    fs.writeFileSync(file, '[prod]\nhost=db.prod\nport=6543\ndbname=shop\nuser=app\n');
    const env = { PGSERVICEFILE: file, PGSYSCONFDIR: dir };
    const expected = {
      kind: 'server',
      host: 'db.prod',
      port: 6543,
      database: 'shop',
      user: 'app',
      sslmode: 'disable',
      service: 'prod',
    };
    expect(resolveTarget({ db: 'service=prod', env })).toEqual(expected);
    expect(resolveTarget({ db: 'postgresql:///?service=prod', env })).toEqual(expected);
    expect(resolveTarget({ env: { ...env, PGSERVICE: 'prod' } })).toEqual(expected);
    expect(resolveTarget({ db: 'service=prod dbname=other', env })).toMatchObject({
      database: 'other',
      host: 'db.prod',
    });
  });

  it('falls back to PGSYSCONFDIR/pg_service.conf, and names both files when no service is found', () => {
    fs.writeFileSync(path.join(dir, 'pg_service.conf'), '[sys]\nhost=sys.host\n');
    const env = { PGSERVICEFILE: path.join(dir, 'absent.conf'), PGSYSCONFDIR: dir, USER: 'me' };
    expect(resolveTarget({ db: 'service=sys', env })).toMatchObject({ host: 'sys.host', user: 'me' });
    const error = thrownBy(() => resolveTarget({ db: 'service=nope', env }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('absent.conf');
    expect(error.message).toContain(path.join(dir, 'pg_service.conf'));
  });
});

describe('the password file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgpass-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const key = { host: 'db.example.com', port: 5432, database: 'shop', user: 'app' };

  it('matches as libpq: first match wins, * matches anything, \\: and \\\\ escape, short lines skipped', () => {
    const text = [
      '# comment',
      'db.example.com:5432:other:app:wrong-db',
      'too:short',
      'db.example.com:*:shop:app:pa\\:ss\\\\word:with colon',
      '*:*:*:*:fallback',
    ].join('\n');
    expect(matchPgpass(text, key)).toBe('pa:ss\\word:with colon');
    expect(matchPgpass(text, { ...key, user: 'someone' })).toBe('fallback');
    expect(matchPgpass('localhost:5432:shop:app:sock\n', { ...key, host: '/var/run/postgresql' })).toBe('sock');
    expect(matchPgpass('h\\:x:5432:shop:app:escaped-host\n', { ...key, host: 'h:x' })).toBe('escaped-host');
    expect(matchPgpass('db.example.com:5432:shop:app:\n', key)).toBeUndefined();
  });

  it('uses passfile, then PGPASSFILE, then ~/.pgpass', () => {
    expect(pgpassFileName({ HOME: '/home/me' }, undefined, 'linux')).toBe('/home/me/.pgpass');
    expect(pgpassFileName({ HOME: '/home/me', PGPASSFILE: '/p' }, undefined, 'linux')).toBe('/p');
    expect(pgpassFileName({ PGPASSFILE: '/p' }, '/q', 'linux')).toBe('/q');
  });

  it("ignores a file others can read, with libpq's warning, and reads it once it is 0600", () => {
    const file = path.join(dir, 'pgpass');
    fs.writeFileSync(file, 'db.example.com:5432:shop:app:s3cret\n', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    const loose = lookupPgpass(key, { PGPASSFILE: file });
    expect(loose.found).toBe(false);
    expect(!loose.found && loose.warning).toContain(
      'has group or world access; permissions should be u=rw (0600) or less',
    );
    fs.chmodSync(file, 0o600);
    expect(lookupPgpass(key, { PGPASSFILE: file })).toEqual({ found: true, password: 's3cret', file });
    expect(lookupPgpass(key, { PGPASSFILE: path.join(dir, 'none') })).toEqual({
      found: false,
      file: path.join(dir, 'none'),
    });
    const notFile = lookupPgpass(key, { PGPASSFILE: dir });
    expect(!notFile.found && notFile.warning).toContain('not a plain file');
  });
});

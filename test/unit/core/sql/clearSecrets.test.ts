/** Passwords PostgreSQL cannot take as a verifier (user mappings, connection strings): the classifier refuses them. */
import { beforeAll, describe, expect, it } from 'vitest';
import { classifySql } from '../../../../src/core/sql/classify';
import { loadParser } from '../../../../src/core/sql/parse';
import { redactPasswords } from '../../../../src/core/sql/secrets/clearSecrets';

describe('a password in clear that cannot become a verifier', () => {
  beforeAll(loadParser);

  it.each([
    ["CREATE USER MAPPING FOR alice SERVER s OPTIONS (user 'bob', password 'p1')", 'password option'],
    ["ALTER USER MAPPING FOR alice SERVER s OPTIONS (SET password 'p2')", 'password option'],
    ["CREATE SERVER s FOREIGN DATA WRAPPER dblink_fdw OPTIONS (host 'h', sslpassword 'p3')", 'password option'],
    ["SELECT * FROM dblink('host=h dbname=d password=p4', 'SELECT 1') AS t(a int)", 'connection string'],
    ["SELECT dblink_connect('c', 'postgresql://u:p5@h/db')", 'connection string'],
    ["BEGIN; SELECT dblink_exec('password = p6', 'DELETE FROM t'); COMMIT", 'connection string'],
  ])('refuses %s, its reason without the password', (sql, what) => {
    const classification = classifySql(sql);
    expect(classification.decision).toBe('refuse');
    const reasons = classification.reasons.join('\n');
    expect(reasons).toContain(what);
    expect(reasons).toContain('outside pg-agent');
    expect(reasons).not.toMatch(/p[1-6]\b/);
  });

  it.each([
    "ALTER ROLE x LOGIN PASSWORD 'kept-as-verifier'",
    "SELECT * FROM notes WHERE body = 'my password is long'",
    "CREATE USER MAPPING FOR alice SERVER s OPTIONS (user 'bob')",
    "SELECT 'http://example.com/a@b'",
  ])('lets %s through to the other rules', (sql) => {
    expect(classifySql(sql).reasons.join('\n')).not.toContain('in clear');
  });
});

describe('redactPasswords (the audit trail of a run)', () => {
  it('hides every password a text quotes, and leaves verifiers and the rest alone', () => {
    const text = JSON.stringify({
      response: `{"sql":"ALTER ROLE a PASSWORD 'it''s-p1' LOGIN; SELECT dblink('host=h password=p2 user=u', 'x')"}`,
      messages: ["OPTIONS (user 'u', password 'p3')", 'postgresql://u:p4@h/db', "PASSWORD 'md5" + 'a'.repeat(32) + "'"],
      verifier: "PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy'",
    });
    const hidden = redactPasswords(text);
    for (const p of ["it''s-p1", 'p1', 'p2', 'p3', 'p4']) expect(hidden).not.toContain(p);
    expect(hidden).toContain("PASSWORD '<hidden>' LOGIN");
    expect(hidden).toContain('password=<hidden> user=u');
    expect(hidden).toContain('postgresql://u:<hidden>@h/db');
    expect(hidden).toContain("PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy'");
    expect(hidden).toContain(`'md5${'a'.repeat(32)}'`);
    expect(redactPasswords('SELECT 1')).toBe('SELECT 1');
  });
});

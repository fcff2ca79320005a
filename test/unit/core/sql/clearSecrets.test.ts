/** Passwords PostgreSQL cannot take as a verifier (user mappings, connection strings): the classifier refuses them. */
import { beforeAll, describe, expect, it } from 'vitest';
import { classifySql } from '../../../../src/core/sql/classify';
import { loadParser } from '../../../../src/core/sql/parse';

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

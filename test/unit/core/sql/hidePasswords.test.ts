/** Passwords in SQL replaced by their SCRAM verifiers (hidePasswords): every spelling, nothing else touched. */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadParser, parseSql } from '../../../../src/core/sql/parse';
import { hidePasswords } from '../../../../src/core/sql/secrets/hidePasswords';
import { verifies } from '../../../../src/core/sql/secrets/scramVerifier';

const hide = (sql: string, earlier: string[] = []) => hidePasswords(parseSql(sql), earlier);
const verifiersIn = (sql: string) => [...sql.matchAll(/'(SCRAM-SHA-256\$[^']+)'/g)].map((m) => m[1] ?? '');

describe('hidePasswords', () => {
  beforeAll(loadParser);

  it('replaces each clear-text password, in every spelling, by a verifier of that password', () => {
    const sql =
      "CREATE USER \"Ann\" WITH LOGIN ENCRYPTED PASSWORD 'it''s-ann' VALID UNTIL 'infinity';\n" +
      "ALTER ROLE bob PASSWORD E'b\\'ob'; alter role current_user password 'ünï'";
    const hidden = hide(sql);
    expect(hidden?.roles).toEqual(['Ann', 'bob', 'CURRENT_USER']);
    const text = hidden?.sql ?? '';
    for (const clear of ["it''s-ann", "it's-ann", "b\\'ob", 'ünï']) expect(text).not.toContain(clear);
    expect(text).toContain("VALID UNTIL 'infinity'");
    const verifiers = verifiersIn(text);
    expect(verifiers.map((v, i) => verifies(v, ["it's-ann", "b'ob", 'ünï'][i] ?? ''))).toEqual([true, true, true]);
    expect(hidden?.parsed.statements.map((s) => s.kind)).toEqual(['CreateRoleStmt', 'AlterRoleStmt', 'AlterRoleStmt']);
  });

  it('leaves SQL without a clear-text password alone (pre-hashed, NULL, other statements)', () => {
    expect(hide("ALTER ROLE a PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy'")).toBeUndefined();
    expect(hide("ALTER ROLE a PASSWORD 'md5d41d8cd98f00b204e9800998ecf8427e'")).toBeUndefined();
    expect(hide('ALTER ROLE a PASSWORD NULL')).toBeUndefined();
    expect(hide("SELECT 'password' AS password")).toBeUndefined();
  });

  it('uses a fresh salt each time, unless an earlier text of the same statement and password gives its own', () => {
    const sql = "ALTER ROLE a PASSWORD 'same'";
    const first = hide(sql)?.sql ?? '';
    expect(hide(sql)?.sql).not.toBe(first);
    expect(hide(sql, ["ALTER ROLE b PASSWORD 'x'", first])?.sql).toBe(first);
    expect(hide("ALTER ROLE a PASSWORD 'other'", [first])?.sql).not.toBe(first);
  });
});

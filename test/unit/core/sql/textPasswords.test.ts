/** Passwords in kept free text: as verifiers in a question, a task or a model's SQL; hidden in an audit line. */
import { describe, expect, it } from 'vitest';
import { toolArgsWithPasswordsHidden } from '../../../../src/core/sql/secrets/hidePasswords';
import { scramVerifier, verifierParts } from '../../../../src/core/sql/secrets/scramVerifier';
import {
  passwordsAsVerifiers,
  redactPasswords,
  withRedactedPasswords,
} from '../../../../src/core/sql/secrets/textPasswords';

/** The verifiers a text holds, each checked against the password it must stand for. */
function verifiersOf(text: string): string[] {
  return [...text.matchAll(/'(SCRAM-SHA-256\$[^']+)'/g)].map((m) => m[1] ?? '');
}
function standsFor(verifier: string, password: string): boolean {
  const parts = verifierParts(verifier);
  return parts !== undefined && scramVerifier(password, parts) === verifier;
}

describe('passwordsAsVerifiers (a question, a task, the SQL of a model tool call)', () => {
  it.each([
    ["CREATE ROLE bob LOGIN PASSWORD 'it''s-p1'", "it's-p1"],
    ["ALTER ROLE bob PASSWORD E'a\\'b\\\\c'", "a'b\\c"],
    ["ALTER ROLE bob PASSWORD E'tab\\there'", 'tab\there'],
    ['ALTER ROLE bob PASSWORD $$dollar p2$$', 'dollar p2'],
    ["ALTER ROLE bob PASSWORD $pw$with 'quotes' and $$ inside$pw$", "with 'quotes' and $$ inside"],
    ["create a login role bob with password 'hunter2'", 'hunter2'],
    ['set the password for bob to "correct horse"', 'correct horse'],
    ["bob's password is 'p3 with spaces'", 'p3 with spaces'],
    ["password: 'p4'", 'p4'],
  ])('%s: the password is replaced by a verifier that stands for it', (text, password) => {
    const kept = passwordsAsVerifiers(text);
    expect(kept).not.toContain(password);
    const verifiers = verifiersOf(kept);
    expect(verifiers).toHaveLength(1);
    expect(standsFor(verifiers[0] ?? '', password)).toBe(true);
  });

  it('hides a connection string password and leaves verifiers, md5 and the rest of the text alone', () => {
    const verifier = "PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy'";
    const md5 = `PASSWORD 'md5${'a'.repeat(32)}'`;
    expect(passwordsAsVerifiers(verifier)).toBe(verifier);
    expect(passwordsAsVerifiers(md5)).toBe(md5);
    expect(passwordsAsVerifiers("SELECT dblink('host=h password=p5 user=u', 'x')")).toBe(
      "SELECT dblink('host=h password=<hidden> user=u', 'x')",
    );
    expect(passwordsAsVerifiers('connect to postgres://u:p6@h/db')).toBe('connect to postgres://u:<hidden>@h/db');
    const plain = 'which users changed their password last week?';
    expect(passwordsAsVerifiers(plain)).toBe(plain);
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

  it.each([
    ["ALTER ROLE a PASSWORD E'esc\\'aped-p7'", 'aped-p7'],
    ['ALTER ROLE a PASSWORD $$dollar-p8$$', 'dollar-p8'],
    ['ALTER ROLE a PASSWORD $t$tagged-p9$t$', 'tagged-p9'],
  ])('hides %s, alone and in a record to keep', (sql, secret) => {
    expect(redactPasswords(sql)).not.toContain(secret);
    const record = { at: 'now', messages: [{ role: 'assistant', content: sql }], calls: 2 };
    const kept = JSON.stringify(withRedactedPasswords(record));
    expect(kept).not.toContain(secret);
    expect(JSON.parse(kept)).toMatchObject({ at: 'now', calls: 2, messages: [{ role: 'assistant' }] });
  });
});

describe("toolArgsWithPasswordsHidden (a job's tool calls before they are kept)", () => {
  it("leaves count_rows' WHERE condition as written: it is SQL, and a verifier would change what it counts", async () => {
    const args = { table: 'public.users', where: "password = 'hunter2' AND active" };
    expect(await toolArgsWithPasswordsHidden(args)).toEqual(args);
  });

  it('rewrites a role password in run_sql and in free text, each to a verifier that stands for it', async () => {
    const hidden = await toolArgsWithPasswordsHidden({
      sql: "ALTER ROLE bob PASSWORD 'p-sql'",
      note: "bob's password is 'p-note'",
    });
    const [inSql] = verifiersOf(hidden.sql);
    const [inNote] = verifiersOf(hidden.note);
    expect(standsFor(inSql ?? '', 'p-sql')).toBe(true);
    expect(standsFor(inNote ?? '', 'p-note')).toBe(true);
  });
});

/**
 * Passwords that could not be kept as a SCRAM verifier, through the real guard (dist/cli.js, its own process,
 * `--log-format json --log-file`) and the real CLI in the same workspace: `ALTER ROLE … PASSWORD` inside a client's
 * transaction, a user mapping's password option and a dblink connection string are refused with the way to do it
 * instead; afterwards no file under .pgagent/, no line of the guard's log and nothing on its stderr holds the
 * password, and nothing ran (the role still has no password). Sent alone, the role's password is held as its
 * verifier (guardOperable.test.ts, historySecrets.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { startGuardProcess } from '../../support/guardProcess';
import { psqlRun } from '../../support/psqlRun';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe.skipIf(!postgresAvailable)('passwords the guard and the CLI cannot keep as a verifier', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  const role = `arch_secret_role_${randomBytes(4).toString('hex')}`;
  const secrets: string[] = [];
  const secret = (what: string) => {
    const value = `arch-${what}-${randomBytes(6).toString('hex')}`;
    secrets.push(value);
    return value;
  };
  const leaks = () => {
    const files = [...filesUnder(join(guard.workspace, '.pgagent')), join(guard.workspace, 'guard.log')];
    const texts = [...files.map((f) => readFileSync(f, 'utf8')), guard.stderr()];
    return secrets.filter((s) => texts.some((t) => t.includes(s)));
  };

  beforeAll(async () => {
    db = await createScratchDatabase('arch_secrets');
    await execSql(db.url, `CREATE TABLE t (id int PRIMARY KEY); CREATE ROLE ${role}`);
    guard = await startGuardProcess(db.url, { args: ['--log-format', 'json', '--log-file', 'guard.log'] });
  }, 60_000);

  afterAll(async () => {
    await guard?.stop();
    await db?.drop();
    await execSql(db.url.replace(/\/[^/]*$/, '/postgres'), `DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
  });

  it('refuses ALTER ROLE … PASSWORD inside a client transaction, rolled back, with the way to send it', async () => {
    const password = secret('in-transaction');
    const client = new pg.Client({ connectionString: guard.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO t VALUES (1)');
      const refused = await client.query(`ALTER ROLE ${role} PASSWORD '${password}'`).then(
        () => undefined,
        (error: Error & { hint?: string }) => error,
      );
      expect(refused?.message).toContain("it sets a role's password");
      expect(refused?.hint).toContain('outside BEGIN … COMMIT');
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
    expect(await queryValue(db.url, `SELECT rolpassword IS NULL FROM pg_authid WHERE rolname = '${role}'`)).toBe(true);
    expect(await queryValue(db.url, 'SELECT count(*)::int FROM t')).toBe(0);
    expect(leaks()).toEqual([]);
  });

  it('refuses a user mapping password and a dblink connection string, from the CLI and through the guard', async () => {
    const mapping = secret('mapping');
    const created = await guard.pgAgent([
      'sql',
      '--no-input',
      `CREATE USER MAPPING FOR ${role} SERVER nowhere OPTIONS (user 'u', password '${mapping}')`,
    ]);
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain('sets a password option (password) in clear');
    expect(created.stderr).toContain('outside pg-agent');
    expect(created.stderr).not.toContain(mapping);

    const linked = secret('dblink');
    const viaGuard = await psqlRun(guard.url, [
      `SELECT * FROM dblink('host=127.0.0.1 dbname=postgres password=${linked}', 'SELECT 1') AS r(one int)`,
    ]);
    expect(viaGuard.code).not.toBe(0);
    expect(viaGuard.stderr).toContain('holds a connection string with a password in clear');
    const altered = secret('altered');
    const viaCli = await guard.pgAgent([
      'sql',
      '--no-input',
      `ALTER USER MAPPING FOR ${role} SERVER nowhere OPTIONS (SET password '${altered}')`,
    ]);
    expect(viaCli.code).not.toBe(0);
    expect(leaks()).toEqual([]);
    expect(readFileSync(join(guard.workspace, 'guard.log'), 'utf8')).toContain('"verdict":"refused"');
  });
});

/**
 * Query history and passwords (issue 33): a held `ALTER ROLE … PASSWORD` is kept and run as its SCRAM verifier,
 * through the real CLI processes (hold → approve → exec → history), on a cluster of the test's own that checks
 * passwords (scram-sha-256): afterwards the typed password is in no file under .pgagent/, and the role logs in
 * with it (and not with another). Reads and the executed write are in `pg-agent history`, newest first.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAgentProcess } from '../../support/cliProcess';
import type { TestCluster } from '../../support/testCluster';
import { clusterToolsAvailable, startTestCluster } from '../../support/testCluster';
import { execSql } from '../../support/scratchDatabase';

const TYPED = 'i33b-Typed-Secret-7731';
const ROLE = 'i33b_login_role';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe.runIf(clusterToolsAvailable().available)('a password set through pg-agent, and the query history', () => {
  let cluster: TestCluster;
  const workspace = mkdtempSync(join(tmpdir(), 'i33b-history-'));
  let env: Record<string, string>;
  const cli = (argv: string[]) => pgAgentProcess([...argv, '--workspace', workspace], { cwd: workspace, env });

  beforeAll(async () => {
    cluster = await startTestCluster({ serverNames: 'DNS:localhost' });
    env = {
      HOME: workspace,
      XDG_CONFIG_HOME: join(workspace, 'xdg'),
      DATABASE_URL: `postgres://postgres@localhost:${cluster.port}/postgres?sslmode=disable`,
      PGPASSWORD: cluster.superPassword,
    };
    const superuser = `postgres://postgres:${encodeURIComponent(cluster.superPassword)}@localhost:${cluster.port}/postgres`;
    await execSql(superuser, `CREATE ROLE ${ROLE} NOLOGIN`);
  }, 60_000);

  afterAll(() => {
    cluster?.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  const login = async (password: string) => {
    const client = new pg.Client({ host: 'localhost', port: cluster.port, user: ROLE, password, database: 'postgres' });
    try {
      await client.connect();
      return (await client.query<{ who: string }>('SELECT current_user AS who')).rows[0]?.who;
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  it('holds, approves and runs the verifier; the typed password is in no file; the role logs in with it', async () => {
    const held = await cli(['sql', '--json', '--no-input', `ALTER ROLE ${ROLE} LOGIN PASSWORD '${TYPED}'`]);
    expect(held.code, held.stderr).toBe(3);
    const out = JSON.parse(held.stdout) as { ticket: { id: string }; impact: { warnings: string[] } };
    expect(held.stdout).not.toContain(TYPED);
    expect(held.stdout).toContain('SCRAM-SHA-256$4096:');
    expect(out.impact.warnings.join('\n')).toContain(`Sets the password of role ${ROLE}`);
    const id = out.ticket.id;
    const approved = await cli(['approvals', 'approve', id, '--comment', 'ok']);
    expect(approved.code, approved.stderr).toBe(0);
    const ran = await cli(['exec', '--ticket', id]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await cli(['sql', 'SELECT 1 AS one'])).toMatchObject({ code: 0 });

    // The server keeps the verifier that was shown, and checks the typed password against it.
    expect(await login(TYPED)).toBe(ROLE);
    await expect(login(`${TYPED}-not`)).rejects.toThrow(/password authentication failed/);

    const history = await cli(['history', '--json']);
    expect(history.code, history.stderr).toBe(0);
    const { entries } = JSON.parse(history.stdout) as {
      entries: { kind: string; sql: string; ticket?: string; origin: string; status: string; db: string }[];
    };
    expect(entries.map((e) => [e.kind, e.origin, e.status])).toEqual([
      ['read', 'cli', 'ok'],
      ['write', 'cli', 'ok'],
    ]);
    expect(entries[0]?.sql).toBe('SELECT 1 AS one');
    expect(entries[1]).toMatchObject({ ticket: id, db: `localhost:${cluster.port}/postgres` });
    expect(entries[1]?.sql).toContain('SCRAM-SHA-256$4096:');
    const grep = await cli(['history', '--grep', 'alter role']);
    expect(grep.stdout).toContain(`ticket ${id}`);
    expect(grep.stdout).not.toContain('SELECT 1');

    const files = filesUnder(join(workspace, '.pgagent'));
    expect(files.some((f) => f.includes(`${join('.pgagent', 'history')}`))).toBe(true);
    expect(files.some((f) => f.includes(`${join('.pgagent', 'approvals')}`))).toBe(true);
    const leaking = files.filter((f) => readFileSync(f).includes(TYPED));
    expect(leaking).toEqual([]);
  }, 120_000);

  it('refuses bad history flags with exit 2 and loses nothing', async () => {
    const bad = await cli(['history', '--limit', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit');
    expect((await cli(['history', '--json'])).code).toBe(0);
  });
});

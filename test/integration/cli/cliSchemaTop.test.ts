/**
 * `schema` keeps what an extension made apart from the user's tables, and `top` lists the application's statements,
 * not pg-agent's own catalog reads: on the DBA cluster (pg_stat_statements and hypopg installed), real CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPgAgent } from '../../support/cliHarness';
import { createDbaScratch, dbaClusterAvailable } from '../../support/dbaCluster';
import type { ScratchDatabase } from '../../support/scratchDatabase';
import { execSql } from '../../support/scratchDatabase';

describe.runIf(dbaClusterAvailable)('schema and top without what is not the application', () => {
  let db: ScratchDatabase;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-schema-top-'));
  const cli = (argv: string[]) =>
    runPgAgent([...argv, '--db', db.url, '--workspace', workspace], { cwd: workspace, env: { USER: 'dba' } });

  beforeAll(async () => {
    db = await createDbaScratch();
    await execSql(
      db.url,
      `CREATE EXTENSION IF NOT EXISTS pg_stat_statements; CREATE EXTENSION IF NOT EXISTS hypopg;
       CREATE TABLE accounts (id int PRIMARY KEY, owner text); INSERT INTO accounts SELECT g, 'o' || g FROM generate_series(1, 50) g;`,
    );
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('schema lists extension-owned views apart, and marks them in --json', async () => {
    const text = (await cli(['schema', '--compact'])).stdout;
    const [mine, extensions] = text.split('Made by extensions (not your tables): ');
    expect(mine).toContain('public.accounts');
    expect(mine).not.toContain('pg_stat_statements');
    expect(mine).not.toContain('hypopg_list_indexes');
    expect(extensions).toContain('pg_stat_statements (view, pg_stat_statements)');
    expect(extensions).toContain('hypopg_list_indexes (view, hypopg)');
    const json = JSON.parse((await cli(['schema', '--json'])).stdout) as {
      extensionOwned: { name: string; extension: string }[];
    };
    expect(json.extensionOwned).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'pg_stat_statements', extension: 'pg_stat_statements' }),
      ]),
    );
  });

  it("top lists the application's statements, not the catalog reads pg-agent made", async () => {
    // The application's statement, as the application sends it; and pg-agent's own catalog reads (its schema
    // read and the checks of a statement through the safety path).
    for (let i = 0; i < 5; i++) await execSql(db.url, `SELECT owner FROM accounts WHERE id = ${i + 1}`);
    await cli(['schema']);
    await cli(['sql', '--', 'SELECT count(*) FROM accounts']);
    const top = await cli(['top', '--json', '--limit', '50']);
    expect(top.code, top.stderr).toBe(0);
    const queries = (JSON.parse(top.stdout) as { queries: { query: string }[] }).queries.map((q) => q.query);
    expect(
      queries.some((q) => /FROM accounts/i.test(q)),
      JSON.stringify(queries),
    ).toBe(true);
    expect(queries.filter((q) => /\b(from|join)\s+(pg_catalog\.)?pg_[a-z_]+/i.test(q))).toEqual([]);
  });
});

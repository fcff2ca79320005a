import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchemaSnapshot } from '../../../src/shared/schema';
import { runPgAgent } from '../../support/cliHarness';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

describe.runIf(postgresAvailable)('pg-agent schema on a PostgreSQL server', () => {
  let scratch: ScratchDatabase;
  const cwd = mkdtempSync(join(tmpdir(), 'pgagent-cli-schema-'));

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      `CREATE TABLE authors (id int PRIMARY KEY, name text NOT NULL);
       CREATE TABLE books (id int PRIMARY KEY, author_id int REFERENCES authors ON DELETE CASCADE, title text);
       COMMENT ON TABLE books IS 'Books on the shelf';`,
    );
  });

  afterAll(async () => {
    await scratch?.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('prints tables, columns and foreign keys for a person', async () => {
    const run = await runPgAgent(['schema', '--db', scratch.url], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('2 tables, 0 views');
    expect(run.stdout).toContain('public.books  table');
    expect(run.stdout).toContain('Books on the shelf');
    expect(run.stdout).toContain('FK (author_id) → public.authors(id) ON DELETE CASCADE');
  });

  it('prints the snapshot as JSON, and takes DATABASE_URL when --db is absent', async () => {
    const run = await runPgAgent(['schema', '--json'], { cwd, env: { DATABASE_URL: scratch.url } });
    expect(run.code).toBe(0);
    const snapshot = JSON.parse(run.stdout) as SchemaSnapshot;
    expect(snapshot.database).toBe(scratch.name);
    expect(snapshot.tables.map((t) => t.name)).toEqual(['authors', 'books']);
  });

  it('uses a named profile from .pgagent/config.json with the password from PGPASSWORD', async () => {
    const url = new URL(scratch.url);
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(join(cwd, '.pgagent'), { recursive: true });
    writeFileSync(
      join(cwd, '.pgagent', 'config.json'),
      JSON.stringify({
        connections: [
          {
            name: 'local',
            host: url.hostname,
            port: Number(url.port || 5432),
            database: scratch.name,
            user: url.username || 'postgres',
          },
        ],
      }),
    );
    const run = await runPgAgent(['schema', '--connection', 'local', '--table', 'books', '--json'], {
      cwd,
      env: { PGPASSWORD: 'unused-with-trust' },
    });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as SchemaSnapshot).tables.map((t) => t.name)).toEqual(['books']);
  });

  it('exits 1 with the advice when the server is unreachable', async () => {
    const run = await runPgAgent(['schema', '--db', 'postgres://postgres@127.0.0.1:1/postgres', '--json'], { cwd });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'error', error: { code: 'DB_UNREACHABLE' } });
    expect(run.stderr).toContain('Is the server running');
  });
});

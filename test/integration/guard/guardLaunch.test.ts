/**
 * "Start Guarded Endpoint" without VS Code: `pg-agent guard` started exactly as the command builds it
 * (buildGuardLaunch, the pure builder the extension uses) for a connection profile, a guard user made the
 * same way, and a client on the URL the command would copy: a read passes, a write waits on a ticket in
 * the workspace's store (what "Waiting for you" lists), and the database is unchanged.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGuardLaunch, endpointUrl, listeningPort } from '../../../src/host/agents/guardLaunch';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

describe('the guard launch VS Code builds', () => {
  it('passes the password only in the environment, and listens on a free loopback port', () => {
    const launch = buildGuardLaunch(
      {
        extensionPath: '/ext',
        nodePath: '/node',
        electron: true,
        workspaceDir: '/ws',
        profile: { name: 'prod', host: 'db', port: 5433, database: 'shop', user: 'app', sslmode: 'require' },
        password: 's3cret',
      },
      'vscode_test',
    );
    expect(launch.serveArgs).toEqual([
      '/ext/dist/cli.js',
      'guard',
      '--listen',
      '127.0.0.1:0',
      '--db',
      'postgres://app@db:5433/shop?sslmode=require',
      '--workspace',
      '/ws',
    ]);
    expect(launch.addUserArgs.slice(0, 6)).toEqual([
      '/ext/dist/cli.js',
      'guard',
      'users',
      'add',
      'vscode_test',
      '--json',
    ]);
    expect(JSON.stringify([launch.serveArgs, launch.addUserArgs])).not.toContain('s3cret');
    expect(launch.env).toEqual({ ELECTRON_RUN_AS_NODE: '1', PGPASSWORD: 's3cret' });
    expect(listeningPort('pg-agent guard: postgresql://127.0.0.1:40123/shop in front of …')).toBe(40123);
    expect(endpointUrl('postgresql://vscode_test:pw@127.0.0.1:6433/shop', 40123)).toBe(
      'postgresql://vscode_test:pw@127.0.0.1:40123/shop',
    );
  });
});

describe.skipIf(!postgresAvailable)('pg-agent guard as "Start Guarded Endpoint" runs it', () => {
  let db: ScratchDatabase;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-guard-launch-'));
  let stop: () => void = () => undefined;
  let url = '';

  beforeAll(async () => {
    db = await createScratchDatabase('pgagent_guard_launch');
    await execSql(db.url, 'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2);');
    const u = new URL(db.url);
    const launch = buildGuardLaunch({
      extensionPath: process.cwd(),
      nodePath: process.execPath,
      electron: false,
      workspaceDir: workspace,
      profile: {
        name: 'scratch',
        host: u.hostname,
        port: Number(u.port || 5432),
        database: db.name,
        user: u.username || 'postgres',
      },
    });
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspace, ...launch.env };
    const added = JSON.parse(
      execFileSync(launch.command, launch.addUserArgs, { cwd: launch.cwd, env, encoding: 'utf8' }),
    ) as { url: string };
    const child = spawn(launch.command, launch.serveArgs, {
      cwd: launch.cwd,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    stop = () => child.kill('SIGINT');
    let stderr = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const found = listeningPort(stderr);
        if (found !== undefined) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`guard exited ${code}: ${stderr}`)));
    });
    url = endpointUrl(added.url, port);
  }, 60_000);

  afterAll(async () => {
    stop();
    await db?.drop();
  });

  it('passes a read and holds a write on a ticket in the workspace', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 2 }]);
      const held = await client.query('DELETE FROM t').catch((error: pg.DatabaseError) => error);
      expect((held as pg.DatabaseError).code).toBe('PA001');
    } finally {
      await client.end();
    }
    expect(readdirSync(join(workspace, '.pgagent', 'approvals')).filter((f) => f.startsWith('tkt_'))).toHaveLength(1);
    expect(Number(await queryValue(db.url, 'SELECT count(*) FROM t'))).toBe(2);
  });
});

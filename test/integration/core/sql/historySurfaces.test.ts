/**
 * The query history from the other surfaces, as their clients use them: an MCP agent's read (the official SDK
 * client on `pg-agent mcp`) and reads that psql-like clients send through `pg-agent guard` (pg, simple and
 * extended protocol) land in the database's history with their origin and who sent them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../../support/guardProcess';
import { startGuardProcess } from '../../../support/guardProcess';
import { pgAgentMcp } from '../../../support/mcpClient';
import type { McpSession } from '../../../support/mcpClient';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';

const ROLE = 'i33b_guard_role';
const TYPED = 'i33b-guard-Secret-5521';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

interface Entry {
  origin: string;
  who: string;
  kind: string;
  sql: string;
  rows: number | null;
}

describe.runIf(postgresAvailable)('query history from MCP and the guard', () => {
  let scratch: ScratchDatabase;
  let guard: GuardProcess;
  let mcp: McpSession;

  beforeAll(async () => {
    scratch = await createScratchDatabase('i33b_hist');
    await execSql(scratch.url, 'CREATE TABLE i33b_t (id int PRIMARY KEY); INSERT INTO i33b_t VALUES (1), (2), (3)');
    await execSql(scratch.url, `DROP ROLE IF EXISTS ${ROLE}; CREATE ROLE ${ROLE} NOLOGIN`);
    guard = await startGuardProcess(scratch.url);
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', guard.workspace]);
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await guard?.stop();
    await scratch?.drop();
    if (scratch) await execSql(scratch.url.replace(/\/[^/]*$/, '/postgres'), `DROP ROLE IF EXISTS ${ROLE}`);
  });

  const history = async (): Promise<Entry[]> => {
    const out = await guard.pgAgent(['history', '--json']);
    return (JSON.parse(out.stdout) as { entries: Entry[] }).entries;
  };

  it("records the guard's passed reads with the guard user, and an MCP agent's read with its rows", async () => {
    const client = new pg.Client({ connectionString: guard.url });
    await client.connect();
    try {
      await client.query('SELECT count(*) FROM i33b_t /* simple */');
      await client.query({ text: 'SELECT id FROM i33b_t WHERE id = $1 /* extended */', values: [2] });
    } finally {
      await client.end();
    }
    const read = await mcp.call('run_read', { sql: 'SELECT id FROM i33b_t ORDER BY id /* mcp */' });
    expect(read.isError).toBeFalsy();
    // Each process writes its queue a moment after the statement, and at exit: wait for the lines to be there.
    let entries: Entry[] = [];
    for (let i = 0; i < 100 && entries.length < 3; i++) {
      entries = (await history()).filter((e) => e.sql.includes('i33b_t'));
      if (entries.length < 3) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const of = (mark: string) => entries.find((e) => e.sql.includes(mark));
    expect(of('simple')).toMatchObject({ origin: 'guard', who: 'alice', kind: 'read' });
    expect(of('extended')).toMatchObject({ origin: 'guard', who: 'alice', kind: 'read' });
    expect(of('mcp')).toMatchObject({ origin: 'mcp', kind: 'read', rows: 3 });
  }, 60_000);

  it('holds a password sent through the guard as its verifier; the retry after approval runs that verifier', async () => {
    const send = async () => {
      const client = new pg.Client({ connectionString: guard.url });
      await client.connect();
      try {
        await client.query(`ALTER ROLE ${ROLE} PASSWORD '${TYPED}'`);
        return undefined;
      } catch (error) {
        return error as Error & { code?: string };
      } finally {
        await client.end();
      }
    };
    const held = await send();
    expect(held?.code).toBe('PA001');
    const ticket = /ticket (tkt_[a-z0-9]+)/.exec(held?.message ?? '')?.[1] ?? '';
    expect((await guard.pgAgent(['approvals', 'approve', ticket])).code).toBe(0);
    expect(await send()).toBeUndefined();
    const shown = await guard.pgAgent(['approvals', 'show', ticket, '--json']);
    const verifier = /'(SCRAM-SHA-256\$[^']+)'/.exec(shown.stdout)?.[1];
    expect(verifier).toBeDefined();
    const admin = new pg.Client({ connectionString: scratch.url });
    await admin.connect();
    try {
      const stored = await admin.query<{ p: string }>('SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1', [
        ROLE,
      ]);
      expect(stored.rows[0]?.p).toBe(verifier);
    } finally {
      await admin.end();
    }
    const leaking = filesUnder(join(guard.workspace, '.pgagent')).filter((f) => readFileSync(f).includes(TYPED));
    expect(leaking).toEqual([]);
  }, 60_000);
});

/**
 * The query history from the other surfaces, as their clients use them: an MCP agent's read (the official SDK
 * client on `pg-agent mcp`) and reads that psql-like clients send through `pg-agent guard` (pg, simple and
 * extended protocol) land in the database's history with their origin and who sent them.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../support/guardProcess';
import { startGuardProcess } from '../support/guardProcess';
import { pgAgentMcp } from '../support/mcpClient';
import type { McpSession } from '../support/mcpClient';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../support/services';

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
    guard = await startGuardProcess(scratch.url);
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', guard.workspace]);
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await guard?.stop();
    await scratch?.drop();
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
});

/**
 * `pg-agent mcp` started exactly as VS Code's MCP server definition describes it (buildMcpLaunch, the pure
 * builder the extension uses): on the embedded sample database (every step of the write workflow) and on
 * a PostgreSQL connection profile whose password travels as PGPASSWORD.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMcpLaunch } from '../../../src/host/agents/mcpLaunch';
import { runPgAgent } from '../../support/cliHarness';
import type { McpSession } from '../../support/mcpClient';
import { errorOf, MCP_TOOL_NAMES, startMcp, textOf } from '../../support/mcpClient';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

const launchFor = (workspaceDir: string, connection: Parameters<typeof buildMcpLaunch>[0]['connection']) =>
  buildMcpLaunch({
    extensionPath: process.cwd(),
    nodePath: process.execPath,
    electron: false,
    workspaceDir,
    connection,
    version: '0.1.0',
  });

describe('pg-agent mcp as VS Code launches it, on the sample database', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-mcp-sample-'));
  let mcp: McpSession;

  beforeAll(async () => {
    mcp = await startMcp(launchFor(workspace, { kind: 'sample' }));
    // The first call generates the sample database (seconds): done here, under the hook's longer limit.
    await mcp.call('list_tables');
  });

  afterAll(async () => {
    await mcp?.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('lists its tools and explores the sample shop', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MCP_TOOL_NAMES);
    const list = await mcp.call('list_tables');
    expect(list.isError, textOf(list)).toBeFalsy();
    expect((list.structuredContent as { tables: { table: string }[] }).tables.map((t) => t.table)).toEqual(
      expect.arrayContaining(['public.orders', 'public.reviews']),
    );
    const read = await mcp.call('run_read', { sql: 'SELECT count(*) AS n FROM reviews WHERE id <= 2' });
    expect(read.structuredContent).toMatchObject({
      status: 'executed',
      fields: [{ name: 'n', type: 'bigint' }],
      rows: [['2']],
    });
  });

  it('holds a proposed write until the CLI approves it, runs it once, refuses a second run', async () => {
    const count = async () =>
      (
        (await mcp.call('run_read', { sql: 'SELECT count(*)::int AS n FROM reviews' })).structuredContent as {
          rows: number[][];
        }
      ).rows[0]?.[0];
    const before = await count();
    const proposed = await mcp.call('propose_write', {
      sql: 'DELETE FROM reviews WHERE id <= 2',
      reason: 'Two spam reviews.',
    });
    expect(proposed.isError, textOf(proposed)).toBeFalsy();
    const { ticket, impact } = proposed.structuredContent as {
      ticket: { id: string; connection: string };
      impact: { exactRows: number };
    };
    expect(ticket.connection).toBe(`sample:${join(workspace, '.pgagent', 'sample-db')}`);
    expect(impact.exactRows).toBeGreaterThanOrEqual(2);
    expect(await count()).toBe(before);

    expect(errorOf(await mcp.call('execute_approved', { ticket_id: ticket.id })).code).toBe('APPROVAL_NOT_APPROVED');
    const approved = await runPgAgent(['approvals', 'approve', ticket.id, '--workspace', workspace], {
      cwd: workspace,
      env: { USER: 'approver' },
    });
    expect(approved.code, approved.stderr).toBe(0);
    const ran = await mcp.call('execute_approved', { ticket_id: ticket.id });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect(ran.structuredContent).toMatchObject({ status: 'executed', ticket: ticket.id, rows: impact.exactRows });
    expect(await count()).toBe((before ?? 0) - 2);
    expect(errorOf(await mcp.call('execute_approved', { ticket_id: ticket.id })).code).toBe('APPROVAL_ALREADY_USED');
    expect(await count()).toBe((before ?? 0) - 2);
  });
});

describe.runIf(postgresAvailable)('pg-agent mcp as VS Code launches it, on a PostgreSQL profile', () => {
  let scratch: ScratchDatabase;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-mcp-profile-'));

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(
      scratch.url,
      'CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, $$hello$$)',
    );
  });

  afterAll(async () => {
    await scratch?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('connects with the profile (password only in the environment) and reads', async () => {
    const url = new URL(scratch.url);
    const launch = launchFor(workspace, {
      kind: 'profile',
      profile: {
        name: 'scratch',
        host: url.hostname,
        port: Number(url.port || 5432),
        database: scratch.name,
        user: decodeURIComponent(url.username),
      },
      password: 's3cret-not-on-the-command-line',
    });
    expect(launch.args.join(' ')).not.toContain('s3cret');
    expect(launch.env.PGPASSWORD).toBe('s3cret-not-on-the-command-line');
    const mcp = await startMcp(launch);
    try {
      const read = await mcp.call('run_read', { sql: 'SELECT body FROM notes' });
      expect(read.isError, textOf(read)).toBeFalsy();
      expect(read.structuredContent).toMatchObject({ rows: [['hello']] });
      const proposed = await mcp.call('propose_write', { sql: 'DELETE FROM notes', reason: 'clean up' });
      expect((proposed.structuredContent as { ticket: { connection: string } }).ticket.connection).toBe(
        `postgres://${url.username}@${url.hostname}:${url.port || 5432}/${scratch.name}`,
      );
    } finally {
      await mcp.close();
    }
  });
});

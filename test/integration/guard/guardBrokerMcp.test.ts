/**
 * `pg-agent mcp --guard URL` (issue 24 item 3, the broker), driven by the MCP SDK's own client: the MCP server
 * gets a guard user's URL and nothing else (no database URL, no ticket store). Reads return the database's rows
 * through the guard; propose_write is held by the guard on ITS ticket and changes nothing; a person approves it
 * at the broker's side (`pg-agent approvals approve` with the guard's workspace); execute_approved sends the
 * identical statement and the guard runs it once. Every assertion on effects reads the database.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardProcess } from '../../support/guardProcess';
import { guardedDatabase, stopGuarded } from '../../support/guardProcess';
import type { McpSession } from '../../support/mcpClient';
import { CLI_PATH, errorOf, startMcp, textOf } from '../../support/mcpClient';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { postgresAvailable } from '../../support/services';

const WRITE = 'UPDATE items SET n = n + 1 WHERE id = 1';

describe.skipIf(!postgresAvailable)('pg-agent mcp --guard: an MCP server with no database credential', () => {
  let db: ScratchDatabase;
  let guard: GuardProcess;
  let mcp: McpSession;
  const agentWorkspace = mkdtempSync(join(tmpdir(), 'pgagent-mcp-guard-'));
  const n = async () => Number(await queryValue(db.url, 'SELECT n FROM items WHERE id = 1'));

  beforeAll(async () => {
    ({ db, guard } = await guardedDatabase('pgagent_guard_mcp', [
      'CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL); INSERT INTO items VALUES (1, 0), (2, 0)',
    ]));
    mcp = await startMcp({
      command: process.execPath,
      args: [CLI_PATH, 'mcp', '--guard', guard.url, '--workspace', agentWorkspace],
      cwd: agentWorkspace,
      env: { HOME: agentWorkspace, XDG_CONFIG_HOME: join(agentWorkspace, '.config') },
    });
  }, 60_000);

  afterAll(async () => {
    if (process.env.GUARD_DEBUG) console.log(guard?.stderr(), mcp?.stderr());
    await mcp?.close();
    await stopGuarded(guard, db);
    rmSync(agentWorkspace, { recursive: true, force: true });
  });

  it("reads through the guard, holds a write on the guard's ticket, and runs it once after a person approves it at the broker", async () => {
    const read = await mcp.call('run_read', { sql: 'SELECT id, n FROM items ORDER BY id' });
    expect(read.isError, textOf(read)).toBeFalsy();
    expect(read.structuredContent).toMatchObject({
      status: 'executed',
      rows: [
        [1, 0],
        [2, 0],
      ],
      rowCount: 2,
    });
    const tables = await mcp.call('list_tables');
    expect(textOf(tables)).toContain('items');

    const proposed = await mcp.call('propose_write', { sql: WRITE, reason: 'bump the first item' });
    expect(proposed.isError, textOf(proposed)).toBeFalsy();
    const held = proposed.structuredContent as { status: string; ticket: { id: string; status: string; risk: string } };
    expect(held).toMatchObject({ status: 'held', ticket: { status: 'PENDING_APPROVAL' } });
    const id = held.ticket.id;
    expect(textOf(proposed)).toContain(`pg-agent approvals approve ${id}`);
    expect(await n()).toBe(0);
    // The ticket is the guard's, in the guard's store; the MCP server's workspace holds none.
    const stored = JSON.parse(readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${id}.json`), 'utf8')) as {
      sql: string;
      status: string;
    };
    expect(stored).toMatchObject({ sql: WRITE, status: 'PENDING_APPROVAL' });
    expect(existsSync(join(agentWorkspace, '.pgagent', 'approvals'))).toBe(false);

    expect((await mcp.call('ticket_status', { ticket_id: id })).structuredContent).toMatchObject({
      id,
      status: 'HELD_BY_GUARD',
      sql: WRITE,
    });
    const early = await mcp.call('execute_approved', { ticket_id: id });
    expect(errorOf(early).code).toBe('APPROVAL_NOT_APPROVED');
    expect(await n()).toBe(0);

    const approved = await guard.pgAgent(['approvals', 'approve', id]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(await n()).toBe(0);
    const ran = await mcp.call('execute_approved', { ticket_id: id });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect(ran.structuredContent).toMatchObject({ status: 'executed', ticket: id, rows: 1 });
    expect(await n()).toBe(1);
    expect(
      (
        JSON.parse(readFileSync(join(guard.workspace, '.pgagent', 'approvals', `${id}.json`), 'utf8')) as {
          status: string;
        }
      ).status,
    ).toBe('EXECUTED');

    // Once: the same call again runs nothing.
    expect((await mcp.call('execute_approved', { ticket_id: id })).isError).toBe(true);
    expect(await n()).toBe(1);
    // The MCP server never had the database's URL: its log does not name the upstream user's URL.
    expect(mcp.stderr()).not.toContain(db.url);
  });
});

// A running `pg-agent mcp` reads the policy in force at every execute_approved (SPEC §5 3a, issue 22): an
// agent that deletes approval.policy from the workspace while the server runs does not get an unsigned
// ticket run when the person's own config keeps the policy for that database, and a policy the person adds
// after the server started is enforced at the next call. Asserted on the rows.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pgAgentProcess } from '../../support/cliProcess';
import type { McpSession } from '../../support/mcpClient';
import { errorOf, pgAgentMcp } from '../../support/mcpClient';
import { queryValue } from '../../support/scratchDatabase';
import type { ScratchDatabase } from '../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../support/services';

describe.runIf(postgresAvailable)('pg-agent mcp reads the policy afresh at every execution', () => {
  let scratch: ScratchDatabase;
  let identity: string;
  let root: string;
  let home: string;
  let workspace: string;
  let mcp: McpSession | undefined;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, 'CREATE TABLE items (id int PRIMARY KEY)');
    identity = `${String(await queryValue(scratch.url, 'SELECT system_identifier::text FROM pg_control_system()'))}/${scratch.name}`;
  });
  afterAll(async () => {
    await scratch?.drop();
  });
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgagent-mcpfresh-'));
    home = join(root, 'home');
    workspace = join(root, 'ws');
    mkdirSync(join(workspace, '.pgagent'), { recursive: true });
    await execSql(scratch.url, 'TRUNCATE items; INSERT INTO items SELECT generate_series(1, 5)');
    return async () => {
      await mcp?.close();
      mcp = undefined;
      rmSync(root, { recursive: true, force: true });
    };
  });

  const env = () => ({ HOME: home, XDG_CONFIG_HOME: join(home, 'config'), USER: 'agent' });
  const writeJson = (file: string, value: unknown) => {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify(value));
  };
  const workspaceConfig = (value: unknown) => writeJson(join(workspace, '.pgagent', 'config.json'), value);
  const ownConfig = (value: unknown) => writeJson(join(home, 'config', 'pg-agent', 'config.json'), value);
  const cli = (...argv: string[]) =>
    pgAgentProcess([...argv.slice(0, 1), '--db', scratch.url, '--workspace', workspace, ...argv.slice(1)], {
      cwd: root,
      env: env(),
    });
  const count = async () => Number(await queryValue(scratch.url, 'SELECT count(*) FROM items'));

  /** The agent proposes a DELETE over MCP and, with its shell, approves it itself (no key: unsigned). */
  async function proposedAndSelfApproved(server: McpSession): Promise<string> {
    const proposed = await server.call('propose_write', { sql: 'DELETE FROM items WHERE id = 1', reason: 'test' });
    expect(proposed.isError).toBeFalsy();
    const id = (proposed.structuredContent as { ticket: { id: string } }).ticket.id;
    const approved = await cli('approvals', 'approve', id);
    expect(approved.code, approved.stderr).toBe(0);
    return id;
  }

  it('still refuses an unsigned ticket after the agent deleted approval.policy from the workspace', async () => {
    ownConfig({ approval: { databases: { [identity]: { requireSignature: true } } } });
    workspaceConfig({ approval: { policy: { requireSignature: true } } });
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace], env());
    const id = await proposedAndSelfApproved(mcp);
    workspaceConfig({});
    const refused = errorOf(await mcp.call('execute_approved', { ticket_id: id }));
    expect(refused.code).toBe('APPROVAL_POLICY');
    expect(refused.message).toContain(`approval.databases["${identity}"]`);
    expect(await count()).toBe(5);
    // The CLI, started afresh, says the same.
    const exec = await cli('exec', '--ticket', id);
    expect(exec.code, exec.stderr).toBe(4);
    expect(await count()).toBe(5);
  });

  it('enforces a policy the person added after the server started', async () => {
    mcp = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace], env());
    const id = await proposedAndSelfApproved(mcp);
    ownConfig({ approval: { databases: { [identity]: { requireSignature: true } } } });
    expect(errorOf(await mcp.call('execute_approved', { ticket_id: id })).code).toBe('APPROVAL_POLICY');
    expect(await count()).toBe(5);
    // Taken away again by the person (their own file): the same ticket, still approved and unspent, runs.
    ownConfig({});
    const ran = await mcp.call('execute_approved', { ticket_id: id });
    expect(ran.isError).toBeFalsy();
    expect(await count()).toBe(4);
  });
});

// An outside agent's write in a real VS Code (code-server + Chromium): an MCP client (the SDK's, standing in
// for Claude Code or Cursor) proposes a write through `pg-agent mcp`; the window shows it with its CodeLens
// and impact card like any held write; the person clicks "Approve for the agent", which only decides it (the one
// executor rule: the agent that proposed it runs it): nothing ran, the card waits for the agent; the agent's
// execute_approved runs it once, the card follows to executed, and a second execute_approved is refused. Also checks that VS Code's language-model tool registry
// lists our nine tools (from the window's log), and that VS Code's MCP registry lists the server our
// definition provider publishes for the connection, starts it and discovers its nine tools.
// Screenshots: test-artifacts/e2e/mcp/.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpSession } from '../support/mcpClient';
import { errorOf, pgAgentMcp, textOf } from '../support/mcpClient';
import { queryValue } from '../support/scratchDatabase';
import type { ScratchDatabase } from '../support/services';
import { createScratchDatabase, execSql } from '../support/services';
import { SHOP_SCHEMA } from '../support/shopSchema';
import { workbenchSuite } from './harness/suite';
import { CODELENS_LINK, pickCommand, RISK_LENS, screenshot, selectConnection } from './harness/workbench';
import { lensesAbove, lensTexts, waitForCardStatus } from './harness/approvalCards';

const SUITE = 'mcp';
const PROPOSED_SQL = 'DELETE FROM orders WHERE id = 1';
const UI_TIMEOUT_MS = 30_000;
const LENS_TIMEOUT_MS = 45_000;

/** The window's "Postgres Agent" log (a LogOutputChannel) of the code-server run that opened `workspace`. */
function windowLog(workspace: string): string {
  const found: string[] = [];
  for (const run of readdirSync(tmpdir()).filter(
    (name) => name.startsWith('pgagent-e2e-') && !name.startsWith(`pgagent-e2e-${SUITE}-`),
  )) {
    const logs = join(tmpdir(), run, 'user-data', 'logs');
    let files: string[];
    try {
      files = readdirSync(logs, { recursive: true, encoding: 'utf8' });
    } catch {
      continue; // Not a code-server run dir, or one being removed.
    }
    for (const file of files.filter((f) => f.endsWith('Postgres Agent.log'))) {
      const text = readFileSync(join(logs, file), 'utf8');
      if (text.includes(workspace) && statSync(join(logs, file)).isFile()) found.push(text);
    }
  }
  return found.join('\n');
}

describe('pg-agent mcp with VS Code open', () => {
  let scratch: ScratchDatabase;
  let agent: McpSession | undefined;

  beforeAll(async () => {
    scratch = await createScratchDatabase('pgagent_e2e_mcp');
    await execSql(scratch.url, SHOP_SCHEMA);
  });

  const suite = workbenchSuite(SUITE, {
    // MCP's commands are part of VS Code's AI features (no model or account is involved in this test).
    settings: { 'chat.disableAIFeatures': false },
    // The window and the agent work on the same server database: a profile in the workspace config.
    connections: () => ({ scratch }),
  });

  afterAll(async () => {
    await agent?.close();
    await scratch?.drop();
  });

  it("shows an outside agent's proposed write for approval; approving only decides it; the agent runs it once and the card follows", async () => {
    const p = suite.page();
    // The window's log says what VS Code's language-model tool registry lists from us.
    await expect
      .poll(() => windowLog(suite.workspace()), {
        timeout: UI_TIMEOUT_MS,
        message: 'the window log line on agent tools',
      })
      .toMatch(/agent tools registered/);
    const registered = /agent tools registered languageModelTools=(\S*) mcpServerProvider=(\w+)/.exec(
      windowLog(suite.workspace()),
    );
    expect(registered?.[1]?.split(',').sort()).toEqual(
      [
        'advise_indexes',
        'describe_table',
        'execute_approved',
        'explain',
        'health',
        'impact',
        'list_tables',
        'propose_write',
        'run_read',
        'schema_context',
        'ticket_status',
        'top_queries',
      ].map((n) => `pgagent_${n}`),
    );
    expect(registered?.[2]).toBe('true');

    await selectConnection(p, 'scratch');
    await screenshot(p, 'connected-to-scratch', SUITE);

    // VS Code's MCP registry lists the server our definition provider publishes for this connection.
    await pickCommand(p, 'MCP: List Servers');
    const server = p.locator('.quick-input-widget .monaco-list-row', { hasText: 'Postgres Agent (scratch)' });
    await suite.explained(() => server.first().waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    await screenshot(p, 'mcp-server-listed', SUITE);
    // VS Code starts it as the definition says (dist/cli.js mcp --db <profile URL> --workspace <folder>).
    await server.first().click();
    await p.locator('.quick-input-widget .monaco-list-row', { hasText: 'Start Server' }).first().click();
    await p.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
    await suite.explained(() =>
      expect
        .poll(
          async () => {
            await pickCommand(p, 'MCP: List Servers');
            const row = p
              .locator('.quick-input-widget .monaco-list-row', { hasText: 'Postgres Agent (scratch)' })
              .first();
            await row.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS });
            const text = (await row.innerText()).replace(/\s+/g, ' ');
            await p.keyboard.press('Escape');
            return text;
          },
          { timeout: UI_TIMEOUT_MS, interval: 1000, message: 'the MCP server running' },
        )
        .toMatch(/Running/),
    );
    // Its output (VS Code's log of the server): our start-up line and the tools VS Code discovered.
    await pickCommand(p, 'MCP: List Servers');
    await p.locator('.quick-input-widget .monaco-list-row', { hasText: 'Postgres Agent (scratch)' }).first().click();
    await p.locator('.quick-input-widget .monaco-list-row', { hasText: 'Show Output' }).first().click();
    await suite.explained(() =>
      expect
        .poll(
          async () => (await p.locator('.part.panel .view-lines').allInnerTexts()).join('\n').replace(/\s+/g, ' '),
          { timeout: UI_TIMEOUT_MS, message: 'the server output' },
        )
        .toMatch(/serving 0\.1\.0 on stdio[\s\S]*Discovered 12 tools/),
    );
    await screenshot(p, 'mcp-server-output', SUITE);

    agent = await pgAgentMcp(['--db', scratch.url, '--workspace', suite.workspace()]);
    const proposed = await agent.call('propose_write', { sql: PROPOSED_SQL, reason: 'Order 1 was a test order.' });
    expect(proposed.isError, textOf(proposed)).toBeFalsy();
    const ticketId = (proposed.structuredContent as { ticket: { id: string } }).ticket.id;

    const toast = p.locator('.notifications-toasts .notification-toast', { hasText: 'proposes a write' });
    await suite.explained(() => toast.waitFor({ state: 'visible', timeout: UI_TIMEOUT_MS }));
    expect(await toast.innerText()).toContain('agent via MCP (pgagent-test-client) proposes a write (LOW');
    await screenshot(p, 'proposal-notification', SUITE);
    await toast.locator('.monaco-button', { hasText: 'Review' }).click();

    await waitForCardStatus(suite, PROPOSED_SQL, 'pending', {
      timeout: UI_TIMEOUT_MS,
      message: 'a pending card for the proposal',
    });
    // The card may have taken the keyboard: click the proposed statement, as a person reading it would.
    await lensesAbove(
      suite,
      PROPOSED_SQL,
      expect.arrayContaining([expect.stringMatching(RISK_LENS), 'Approve for the agent', 'Reject']),
      { timeout: LENS_TIMEOUT_MS, message: 'the CodeLens above the proposed SQL' },
    );
    await screenshot(p, 'proposal-with-codelens-and-card', SUITE);
    // Nothing ran yet, and the agent cannot run it.
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 1')).toBe(1);
    expect(errorOf(await agent.call('execute_approved', { ticket_id: ticketId })).code).toBe('APPROVAL_NOT_APPROVED');

    expect(await lensTexts(p)).not.toContain('Approve & run');
    await p.locator(CODELENS_LINK, { hasText: 'Approve for the agent' }).first().click();
    // Decided, not run: the window waits for the agent, the row is still there, the ticket reads APPROVED.
    await waitForCardStatus(suite, PROPOSED_SQL, 'approved', {
      timeout: UI_TIMEOUT_MS,
      message: 'the card approved, waiting for the agent',
    });
    await screenshot(p, 'approved-waiting-for-the-agent', SUITE);
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 1')).toBe(1);
    expect((await agent.call('ticket_status', { ticket_id: ticketId })).structuredContent).toMatchObject({
      status: 'APPROVED',
    });

    const executed = await agent.call('execute_approved', { ticket_id: ticketId });
    expect(executed.isError, textOf(executed)).toBeFalsy();
    expect(await queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 1')).toBe(0);
    await waitForCardStatus(suite, PROPOSED_SQL, 'executed', {
      timeout: UI_TIMEOUT_MS,
      message: 'the card follows the agent to executed',
    });
    await screenshot(p, 'executed-by-the-agent', SUITE);

    const status = await agent.call('ticket_status', { ticket_id: ticketId });
    expect(status.structuredContent).toMatchObject({ status: 'EXECUTED' });
    expect(errorOf(await agent.call('execute_approved', { ticket_id: ticketId })).code).toBe('APPROVAL_ALREADY_USED');
  });
});

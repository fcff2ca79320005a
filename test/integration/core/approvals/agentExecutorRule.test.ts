/**
 * The one executor rule for an outside agent's proposal (issue 23; README "Other agents"): the agent that proposed
 * it runs it with execute_approved; a person approving it elsewhere only decides it. Three processes on one
 * workspace and one scratch database: the agent (`pg-agent mcp`), the approver (`pg-agent approvals approve`), and
 * this test standing in for a VS Code window, which follows the ticket with the window's own follower
 * (`followAgentRun`) on the shared file ticket store: it sees the approval, runs nothing, and settles only once the
 * agent ran it. The tool text states the rule to the agent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ticket } from '../../../../src/core/approvals/ticket';
import type { TicketStore } from '../../../../src/core/approvals/ticketStore';
import { openTicketStore } from '../../../../src/core/approvals/openTicketStore';
import { workspacePaths } from '../../../../src/core/config/workspace';
import { silentLogger } from '../../../../src/core/platform/logger';
import { followAgentRun } from '../../../../src/host/sqlApproval/agentRunFollower';
import { runPgAgent } from '../../../support/cliHarness';
import type { McpSession } from '../../../support/mcpClient';
import { errorOf, pgAgentMcp, textOf } from '../../../support/mcpClient';
import { queryValue } from '../../../support/scratchDatabase';
import type { ScratchDatabase } from '../../../support/services';
import { createScratchDatabase, execSql, postgresAvailable } from '../../../support/services';
import { SHOP_SCHEMA } from '../../../support/shopSchema';

const SQL = 'DELETE FROM orders WHERE id = 1';

describe.runIf(postgresAvailable)("an outside agent's proposal: decided anywhere, run only by its agent", () => {
  let scratch: ScratchDatabase;
  let agent: McpSession;
  let store: TicketStore;
  const workspace = mkdtempSync(join(tmpdir(), 'pgagent-executor-rule-'));
  const orderOne = () => queryValue(scratch.url, 'SELECT count(*)::int FROM orders WHERE id = 1');

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    await execSql(scratch.url, SHOP_SCHEMA);
    agent = await pgAgentMcp(['--db', scratch.url, '--workspace', workspace]);
    store = await openTicketStore({ approvalsDir: workspacePaths(workspace).approvals, logger: silentLogger });
  });

  afterAll(async () => {
    await store?.close();
    await agent?.close();
    await scratch?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('the tools tell the agent the rule', async () => {
    const { tools } = await agent.client.listTools();
    const described = (name: string) => tools.find((t) => t.name === name)?.description ?? '';
    expect(described('propose_write')).toContain(
      'Approving only records the decision: you, the proposer, are the one who runs it.',
    );
    expect(described('execute_approved')).toContain('only records the decision; running it is yours');
  });

  it('a terminal approval runs nothing; the window following it settles only when the agent ran it', async () => {
    const proposed = await agent.call('propose_write', { sql: SQL, reason: 'the test order' });
    expect(proposed.isError).toBeFalsy();
    expect(textOf(proposed)).toContain('VS Code and the terminal do not run it: you do, once it is approved.');
    const ticketId = (proposed.structuredContent as { ticket: { id: string } }).ticket.id;

    // The window's follower, on an instrumented view of the same store: every status it read.
    const seen: string[] = [];
    const watched: Pick<TicketStore, 'get'> = {
      get: async (id) => {
        const ticket = await store.get(id);
        seen.push(ticket?.status ?? 'missing');
        return ticket;
      },
    };
    let settled: Ticket | undefined;
    const watch = new AbortController();
    const following = followAgentRun(() => Promise.resolve(watched), ticketId, watch.signal, 20).then(
      (t) => (settled = t),
    );

    const approved = await runPgAgent(
      ['approvals', 'approve', ticketId, '--db', scratch.url, '--workspace', workspace, '--comment', 'ok'],
      { cwd: workspace, env: { USER: 'approver' } },
    );
    expect(approved.code).toBe(0);
    expect((await store.get(ticketId))?.status).toBe('APPROVED');
    // The follower read the approved ticket and kept waiting: nobody but the agent runs it.
    await expect.poll(() => seen.includes('APPROVED')).toBe(true);
    expect(settled).toBeUndefined();
    expect(await orderOne()).toBe(1);

    const executed = await agent.call('execute_approved', { ticket_id: ticketId });
    expect(executed.isError).toBeFalsy();
    expect(await orderOne()).toBe(0);
    const final = await following;
    expect(final.status).toBe('EXECUTED');
    expect(final.history.filter((e) => e.action === 'executed')).toHaveLength(1);
    // Run once: a second call is refused.
    expect(errorOf(await agent.call('execute_approved', { ticket_id: ticketId })).code).toBe('APPROVAL_ALREADY_USED');
  });

  it('a follower stops when its watch is aborted (the window closed, or the entry was replaced)', async () => {
    const proposed = await agent.call('propose_write', {
      sql: 'DELETE FROM orders WHERE id = 2',
      reason: 'the second test order',
    });
    const ticketId = (proposed.structuredContent as { ticket: { id: string } }).ticket.id;
    const watch = new AbortController();
    const following = followAgentRun(() => Promise.resolve(store), ticketId, watch.signal, 20);
    watch.abort(new Error('closed'));
    await expect(following).rejects.toThrow('closed');
    expect((await store.get(ticketId))?.status).toBe('PENDING_APPROVAL');
  });
});

/** The one executor of a held write once approved (src/core/approvals/executorRule.ts; docs/mcp.md). */
import { describe, expect, it } from 'vitest';
import {
  execRefusal,
  executorOf,
  nextStepAfterApproval,
  runsInThisWindow,
  ticketRunner,
} from '../../../../src/core/approvals/executorRule';
import { closest } from '../../../../src/cli/didYouMean';

const owner = { execute: () => Promise.reject(new Error('not here')), rejected: () => Promise.resolve() };

describe('executorOf', () => {
  it("an outside agent's proposal is run by its agent, never by the window that approved it", () => {
    expect(executorOf({ proposedBy: 'agent via MCP (claude-code)' })).toBe('its agent');
    expect(runsInThisWindow({ proposedBy: 'agent in VS Code chat' })).toBe(false);
    // An empty name is still a proposal: the rule follows where the write came from, not what it is called.
    expect(runsInThisWindow({ proposedBy: '' })).toBe(false);
  });

  it("an ask run's or a job's write is run by its owner; the person's own write by this window", () => {
    expect(executorOf({ owner })).toBe('its owner');
    expect(executorOf({})).toBe('this window');
    expect(runsInThisWindow({ owner })).toBe(true);
    expect(runsInThisWindow({})).toBe(true);
  });

  it("a proposal stays the agent's even if an owner were attached", () => {
    expect(executorOf({ owner, proposedBy: 'agent via MCP (x)' })).toBe('its agent');
  });
});

describe('who runs a stored ticket (pg-agent exec and approve)', () => {
  const ticket = (createdBy: string, origin?: 'statement' | 'guardTransaction') => ({
    id: 'tkt_aaaaaaaaaaaaaaaaaaaa',
    createdBy,
    ...(origin ? { origin } : {}),
  });

  it("a person's ticket runs with exec; approve says so", () => {
    expect(ticketRunner(ticket('alice'))).toEqual({ kind: 'anyone' });
    expect(execRefusal(ticket('alice'), 'bob', false)).toBeUndefined();
    expect(nextStepAfterApproval(ticket('alice'))).toBe('Run it with: pg-agent exec --ticket tkt_aaaaaaaaaaaaaaaaaaaa');
  });

  it("a guard client's statement runs on its retry: exec refuses, --force only for its requester", () => {
    const guard = ticket('guard user alice');
    expect(nextStepAfterApproval(guard)).toContain(
      'retry the statement from the client (or wait: it runs when the client sends it again)',
    );
    expect(execRefusal(guard, 'bob', false)?.message).toContain(
      'the guard client that asked for it (guard user alice)',
    );
    expect(execRefusal(guard, 'bob', true)?.message).toContain('--force is only for its requester ("alice")');
    expect(execRefusal(guard, 'alice', true)).toBeUndefined();
    // A transaction never runs outside its client's retry, forced or not.
    expect(execRefusal(ticket('guard user alice', 'guardTransaction'), 'alice', true)?.message).toContain(
      'holds a client transaction through pg-agent guard',
    );
  });

  it("an agent's proposal is run by the agent with execute_approved", () => {
    const agent = ticket('agent via MCP (claude-code)');
    expect(nextStepAfterApproval(agent)).toContain('The agent runs it with execute_approved');
    expect(execRefusal(agent, 'alice', false)?.advice).toBe('The agent runs it with execute_approved.');
    expect(execRefusal(agent, 'alice', true)).toBeDefined();
  });
});

describe('did you mean', () => {
  it('names the closest command or flag, and nothing when none is close', () => {
    expect(closest('sqll', ['sql', 'schema', 'exec'])).toBe('sql');
    expect(closest('--dbb', ['--db', '--json', '--workspace'])).toBe('--db');
    expect(closest('--conn', ['--connection', '--comment'])).toBe('--connection');
    expect(closest('aprovals', ['approvals', 'exec'])).toBe('approvals');
    expect(closest('frobnicate', ['sql', 'exec'])).toBeUndefined();
  });
});

/** The one executor of a held write once approved (src/core/approvals/executorRule.ts; docs/mcp.md). */
import { describe, expect, it } from 'vitest';
import { executorOf, runsInThisWindow } from '../../src/core/approvals/executorRule';

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

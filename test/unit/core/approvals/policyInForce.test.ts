// The strictest union the executor applies (SPEC §5 3a): every source's policy must be met, each against that
// source's own approvers, so an approver or role a workspace file adds never satisfies the person's own rule.
import { describe, expect, it } from 'vitest';
import type { PolicyInForce } from '../../../../src/core/approvals/policyInForce';
import { authorizeInForce, requiresPeople } from '../../../../src/core/approvals/policyInForce';
import type { Ticket, TicketDecision } from '../../../../src/core/approvals/ticket';
import type { Risk } from '../../../../src/shared/impactReport';
import { approvedTicket } from '../../../support/tickets';

const HASH = 'c'.repeat(64);
const at = '2026-01-01T00:01:00.000Z';
const approve = (by: string): TicketDecision => ({ by, approve: true, at, hash: HASH });

const ticket = (risk: Risk, decisions: TicketDecision[]): Ticket =>
  approvedTicket(decisions, { risk, id: 'tkt_cccccccccccccccccccc', sql: 'DELETE FROM t', sqlHash: HASH });

const OWN = '/home/me/.config/pg-agent/config.json approval.databases["1/shop"]';
const WORKSPACE = '/repo/.pgagent/config.json approval.policy';

describe('the policy in force: every layer, each with its own approvers', () => {
  const inForce = (layers: PolicyInForce['layers']): PolicyInForce => ({
    identity: { systemIdentifier: '1', database: 'shop', key: '1/shop' },
    layers,
  });

  it("does not let a role a workspace file grants satisfy the person's own role requirement", () => {
    const policy = inForce([
      {
        source: OWN,
        approvers: [{ name: 'alice', publicKey: 'k1', roles: ['dba'] }],
        policy: { rolesFor: { HIGH: ['dba'] } },
      },
      { source: WORKSPACE, approvers: [{ name: 'mallory', publicKey: 'k2', roles: ['dba'] }], policy: {} },
    ]);
    const refusal = authorizeInForce(policy)(ticket('HIGH', [approve('mallory')]));
    expect(refusal?.code).toBe('APPROVAL_POLICY');
    expect(refusal?.message).toContain('role dba');
    expect(refusal?.message).toContain(`required by ${OWN}`);
    expect(authorizeInForce(policy)(ticket('HIGH', [approve('alice')]))).toBeUndefined();
  });

  it("needs what every layer needs: the person's two persons and the workspace's role, together", () => {
    const policy = inForce([
      { source: OWN, approvers: [], policy: { twoPersonAbove: 'LOW' } },
      {
        source: WORKSPACE,
        approvers: [{ name: 'carol', publicKey: 'k3', roles: ['lead'] }],
        policy: { rolesFor: { MEDIUM: ['lead'] } },
      },
    ]);
    const one = authorizeInForce(policy)(ticket('MEDIUM', [approve('carol')]));
    expect(one?.message).toContain('a second approver');
    expect(one?.message).not.toContain('role lead');
    const twoWithoutRole = authorizeInForce(policy)(ticket('MEDIUM', [approve('dave'), approve('erin')]));
    expect(twoWithoutRole?.message).toContain(`role lead (approval.policy.rolesFor.MEDIUM) (required by ${WORKSPACE})`);
    expect(authorizeInForce(policy)(ticket('MEDIUM', [approve('carol'), approve('dave')]))).toBeUndefined();
  });

  it('refuses an unsigned approval where any layer requires a signature, and lets it through where none does', () => {
    const signed = inForce([{ source: WORKSPACE, approvers: [], policy: { requireSignature: true } }]);
    expect(authorizeInForce(signed)(ticket('LOW', [approve('agent')]))?.message).toMatch(/signed with a key/);
    expect(requiresPeople(signed)).toBe(true);
    const none = inForce([]);
    expect(authorizeInForce(none)(ticket('LOW', [approve('agent')]))).toBeUndefined();
    expect(requiresPeople(none)).toBe(false);
  });
});

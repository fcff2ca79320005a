// approval.policy as the executor applies it (SPEC §5.3): pure rules over a ticket's decisions, with real
// Ed25519 signatures made by node:crypto.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApprovalRules } from '../../../../src/core/approvals/approvalPolicy';
import { missingApprovals, signatureState } from '../../../../src/core/approvals/approvalPolicy';
import { publicKeyText, signDecision, verifyDecision } from '../../../../src/core/approvals/decisionSignature';
import type { Ticket, TicketDecision } from '../../../../src/core/approvals/ticket';
import type { Risk } from '../../../../src/shared/impactReport';
import { approvedTicket } from '../../../support/tickets';

const alice = generateKeyPairSync('ed25519');
const bob = generateKeyPairSync('ed25519');
const HASH = 'a'.repeat(64);

const ticket = (risk: Risk, decisions: TicketDecision[], createdBy = 'requester'): Ticket =>
  approvedTicket(decisions, { risk, createdBy });

const at = '2026-01-01T00:01:00.000Z';
const unsigned = (by: string): TicketDecision => ({ by, approve: true, at, hash: HASH });
const signed = (by: string, key: typeof alice): TicketDecision => ({
  by,
  approve: true,
  at,
  hash: HASH,
  signature: { keyName: by, value: signDecision(key.privateKey, 'tkt_aaaaaaaaaaaaaaaaaaaa', HASH, true, at) },
});

const rules = (policy: ApprovalRules['policy'], connections?: ApprovalRules['connections']): ApprovalRules => ({
  approvers: [
    { name: 'alice', publicKey: publicKeyText(alice.privateKey), roles: ['dba'] },
    { name: 'bob', publicKey: publicKeyText(bob.privateKey), roles: [] },
  ],
  policy,
  ...(connections ? { connections } : {}),
});

describe('decision signatures', () => {
  it('verify over ticket id, hash, decision and time, and nothing else', () => {
    const key = publicKeyText(alice.privateKey);
    const sig = signDecision(alice.privateKey, 'tkt_aaaaaaaaaaaaaaaaaaaa', HASH, true, at);
    expect(verifyDecision(key, 'tkt_aaaaaaaaaaaaaaaaaaaa', HASH, true, at, sig)).toBe(true);
    expect(verifyDecision(key, 'tkt_bbbbbbbbbbbbbbbbbbbb', HASH, true, at, sig)).toBe(false);
    expect(verifyDecision(key, 'tkt_aaaaaaaaaaaaaaaaaaaa', 'b'.repeat(64), true, at, sig)).toBe(false);
    expect(verifyDecision(key, 'tkt_aaaaaaaaaaaaaaaaaaaa', HASH, false, at, sig)).toBe(false);
    expect(verifyDecision(key, 'tkt_aaaaaaaaaaaaaaaaaaaa', HASH, true, '2026-01-01T00:02:00.000Z', sig)).toBe(false);
    expect(verifyDecision('not-a-key', 'tkt_aaaaaaaaaaaaaaaaaaaa', HASH, true, at, sig)).toBe(false);
  });

  it("tell verified, unsigned, unknown keys and forgeries (another person's key, or one name signing for another)", () => {
    const r = rules({});
    expect(signatureState(ticket('LOW', []), signed('alice', alice), r.approvers)).toBe('verified');
    expect(signatureState(ticket('LOW', []), unsigned('alice'), r.approvers)).toBe('unsigned');
    expect(signatureState(ticket('LOW', []), signed('carol', alice), r.approvers)).toBe('unknown-key');
    expect(signatureState(ticket('LOW', []), signed('bob', alice), r.approvers)).toBe('forged');
    const borrowed = { ...signed('alice', alice), by: 'bob' };
    expect(signatureState(ticket('LOW', []), borrowed, r.approvers)).toBe('forged');
  });
});

describe('missingApprovals', () => {
  it('is empty with nothing configured, and for the approvals a policy asks for', () => {
    expect(missingApprovals(ticket('CRITICAL', [unsigned('requester')]), { approvers: [], policy: {} })).toEqual([]);
    expect(
      missingApprovals(
        ticket('HIGH', [signed('alice', alice), signed('bob', bob)]),
        rules({
          requireSignature: true,
          twoPersonAbove: 'MEDIUM',
          noSelfApprovalAbove: 'LOW',
          rolesFor: { HIGH: ['dba'] },
        }),
      ),
    ).toEqual([]);
  });

  it('applies "above" strictly: twoPersonAbove MEDIUM asks two people for HIGH, not for MEDIUM', () => {
    const r = rules({ twoPersonAbove: 'MEDIUM' });
    expect(missingApprovals(ticket('MEDIUM', [unsigned('alice')]), r)).toEqual([]);
    expect(missingApprovals(ticket('HIGH', [unsigned('alice')]), r)).toEqual([
      expect.stringContaining('a second approver'),
    ]);
  });

  it('does not count the requester above noSelfApprovalAbove, nor unsigned approvals under requireSignature', () => {
    expect(missingApprovals(ticket('HIGH', [unsigned('requester')]), rules({ noSelfApprovalAbove: 'LOW' }))).toEqual([
      expect.stringContaining('someone other than requester'),
    ]);
    expect(missingApprovals(ticket('LOW', [unsigned('alice')]), rules({ requireSignature: true }))).toEqual([
      expect.stringContaining('alice approved without a verifiable signature'),
    ]);
  });

  it('asks for a role from the approvers list, and a connection can have its own policy', () => {
    expect(missingApprovals(ticket('CRITICAL', [unsigned('bob')]), rules({ rolesFor: { CRITICAL: ['dba'] } }))).toEqual(
      [expect.stringContaining('the role dba')],
    );
    expect(
      missingApprovals(ticket('CRITICAL', [unsigned('alice')]), rules({ rolesFor: { CRITICAL: ['dba'] } })),
    ).toEqual([]);
    const perConnection = rules({}, { 'postgres://app@db:5432/shop': { twoPersonAbove: 'none' } });
    expect(missingApprovals(ticket('LOW', [unsigned('alice')]), perConnection)).toEqual([
      expect.stringContaining('a second approver'),
    ]);
  });

  it('refuses a forged signature whatever the policy, and ignores decisions on another hash', () => {
    expect(missingApprovals(ticket('LOW', [signed('bob', alice)]), rules({}))).toEqual([
      expect.stringContaining('forged or altered'),
    ]);
    const otherHash = { ...unsigned('alice'), hash: 'c'.repeat(64) };
    expect(missingApprovals(ticket('LOW', [otherHash, unsigned('bob')]), rules({ twoPersonAbove: 'none' }))).toEqual([
      expect.stringContaining('approved so far by bob'),
    ]);
  });
});

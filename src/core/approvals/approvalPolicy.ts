/**
 * Who may approve (SPEC §5.3), checked by the executor when it claims a ticket: signatures against the
 * approvers' public keys in .pgagent/config.json, and approval.policy. Opt-in: with no approvers and no
 * policy configured every approval counts, as before.
 */
import { AgentError } from '../platform/errors';
import type { Approver, ApprovalPolicy, ApprovalRules } from '../../shared/approvalRules';
import type { Risk } from '../../shared/impactReport';
import { RISK_ORDER } from '../../shared/impactReport';
import { verifyDecision, verifyScopedDecision } from './decisionSignature';
import type { Ticket, TicketDecision } from './ticket';

export type { Approver, ApprovalPolicy, ApprovalRules };

export const NO_APPROVAL_RULES: ApprovalRules = { approvers: [], policy: {} };

export type SignatureState = 'verified' | 'unsigned' | 'unknown-key' | 'forged';

/** Whether a decision's signature verifies against the approver of that name in the config. */
export function signatureState(
  ticket: Ticket,
  decision: TicketDecision,
  approvers: readonly Approver[],
): SignatureState {
  const signature = decision.signature;
  if (!signature) return 'unsigned';
  const approver = approvers.find((a) => a.name === signature.keyName);
  if (!approver) return 'unknown-key';
  // A key signs for its own name only: a decision recorded under another name is not this key's.
  if (signature.keyName !== decision.by) return 'forged';
  const valid = signature.scope
    ? verifyScopedDecision(
        approver.publicKey,
        ticket,
        decision.hash,
        decision.approve,
        decision.at,
        signature.scope,
        signature.value,
      )
    : verifyDecision(approver.publicKey, ticket.id, decision.hash, decision.approve, decision.at, signature.value);
  return valid ? 'verified' : 'forged';
}

function above(risk: Risk, level: Risk | 'none' | undefined): boolean {
  if (level === undefined) return false;
  if (level === 'none') return true;
  return RISK_ORDER.indexOf(risk) > RISK_ORDER.indexOf(level);
}

export function policyFor(rules: ApprovalRules, connection: string, profileName?: string): ApprovalPolicy {
  const own =
    rules.connections?.[connection] ?? (profileName !== undefined ? rules.connections?.[profileName] : undefined);
  return { ...rules.policy, ...own };
}

/**
 * What the ticket still lacks under the rules, in words ("a second approver: ..."); empty when it may run.
 * A forged signature is always a refusal, configured policy or not.
 */
export function missingApprovals(ticket: Ticket, rules: ApprovalRules): string[] {
  const policy = policyFor(rules, ticket.connection);
  const approvals = ticket.decisions.filter((d) => d.approve && d.hash === ticket.sqlHash);
  const missing: string[] = [];
  const states = new Map(approvals.map((d) => [d, signatureState(ticket, d, rules.approvers)]));
  for (const [d, state] of states) {
    if (state === 'forged')
      missing.push(
        `a valid signature: the approval recorded for ${d.by} does not verify against ${d.signature?.keyName ?? d.by}'s public key in approval.approvers (forged or altered)`,
      );
  }
  if (missing.length > 0) return missing;
  let counted = approvals;
  if (policy.requireSignature) {
    counted = approvals.filter((d) => states.get(d) === 'verified');
    if (counted.length === 0) {
      const unsigned = approvals.map((d) => d.by);
      missing.push(
        `an approval signed with a key listed in approval.approvers (approval.policy.requireSignature)${unsigned.length > 0 ? `; ${unsigned.join(', ')} approved without a verifiable signature` : ''}`,
      );
      return missing;
    }
  }
  if (above(ticket.risk, policy.noSelfApprovalAbove)) {
    const others = counted.filter((d) => d.by !== ticket.createdBy);
    if (others.length === 0) {
      missing.push(
        `an approval by someone other than ${ticket.createdBy}, who asked for it (approval.policy.noSelfApprovalAbove: ${policy.noSelfApprovalAbove ?? ''}, risk ${ticket.risk})`,
      );
    }
    counted = others;
  }
  const people = [...new Set(counted.map((d) => d.by))];
  if (above(ticket.risk, policy.twoPersonAbove) && people.length < 2) {
    missing.push(
      `a second approver (approval.policy.twoPersonAbove: ${policy.twoPersonAbove ?? ''}, risk ${ticket.risk}); approved so far by ${people.join(', ') || 'nobody who counts'}`,
    );
  }
  const roles = policy.rolesFor?.[ticket.risk];
  if (roles && roles.length > 0) {
    const hasRole = people.some((name) =>
      rules.approvers.find((a) => a.name === name)?.roles.some((r) => roles.includes(r)),
    );
    if (!hasRole)
      missing.push(
        `an approval by someone with the role ${roles.join(' or ')} (approval.policy.rolesFor.${ticket.risk})`,
      );
  }
  return missing;
}

/** The refusal the executor raises (exit 4); the ticket stays APPROVED so the missing approval can be added. */
export function authorizeBy(rules: ApprovalRules): (ticket: Ticket) => AgentError | undefined {
  return (ticket) => {
    const missing = missingApprovals(ticket, rules);
    if (missing.length === 0) return undefined;
    return new AgentError(
      'APPROVAL_POLICY',
      `Ticket ${ticket.id} may not run yet: it needs ${missing.join('; and ')}.`,
      `The ticket is still approved and unspent: add what is missing (\`pg-agent approvals approve ${ticket.id}\` by the right person, with their key), then run it again.`,
    );
  };
}

/**
 * Approving through the broker's own connection (docs/guard-broker.md §3, SPEC §5 3a): a person who has only a
 * guard URL and their enrolled key reads a ticket held by a broker they cannot read (`pg-agent approvals show
 * --guard URL`) and sends a decision signed on their own machine. What travels: the broker's view of a ticket
 * (the ticket, the database identity and the pinned signed policy, raw, so the person's CLI verifies the admin's
 * signature itself) and a signed decision, which the broker verifies as its executor does before recording it.
 * Only signed decisions travel: any guard client (an agent with guard credentials) could send an unsigned one.
 */
import { z } from 'zod';
import { SHA256_HEX_PATTERN, TICKET_ID_PATTERN } from '../../shared/ids';
import { AgentError } from '../platform/errors';
import { signatureState } from './approvalPolicy';
import { publicKeyText } from './decisionSignature';
import type { SigningKey } from './approvalPath';
import { signScopedDecision } from './decisionSignature';
import type { PolicyDocument } from './policyDocument';
import { keyFingerprint, verifyPolicy } from './policyDocument';
import type { SignedMode } from './signedMode';
import { scopeProblem } from './signedMode';
import type { DecisionSignature, Ticket, TicketDecision } from './ticket';
import { contentMatchesHash } from './ticket';

/** The signed policy as the database stores it: the exact text the admin key signed. */
export interface RawPinnedPolicy {
  adminKey: string;
  version: number;
  document: string;
  signature: string;
}

/** What the broker answers for one ticket. */
export interface BrokerTicketView {
  ticket: Ticket;
  /** The identity key of the broker's database, read by the broker from its upstream. */
  database: string;
  /** The pinned signed policy; null in default mode (nothing pinned). */
  policy: RawPinnedPolicy | null;
}

/** A decision as it travels to the broker. */
export interface WireDecision {
  ticket: string;
  approve: boolean;
  by: string;
  at: string;
  hash: string;
  comment?: string;
  signature: DecisionSignature;
}

const wireDecisionSchema = z.strictObject({
  ticket: z.string().regex(TICKET_ID_PATTERN),
  approve: z.boolean(),
  by: z.string().min(1).max(64),
  at: z.iso.datetime(),
  hash: z.string().regex(SHA256_HEX_PATTERN),
  comment: z.string().max(2000).optional(),
  signature: z.strictObject({
    keyName: z.string().min(1).max(64),
    value: z.string().min(1).max(200),
    scope: z.strictObject({ database: z.string().min(1).max(200), policyVersion: z.number().int().min(0) }).optional(),
  }),
});

/** How far a decision's time may be from the broker's clock: a signed decision is sent at once. */
const WIRE_CLOCK_SKEW_MS = 5 * 60_000;

function refused(message: string, advice?: string): AgentError {
  return new AgentError('APPROVAL_POLICY', message, advice);
}

/** The decision text a guard client sent; refuses anything but a signed decision of the exact shape. */
export function parseWireDecision(text: string): WireDecision {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AgentError(
      'BAD_INPUT',
      'pg_agent.decide takes a signed decision as JSON (what `pg-agent approvals approve --guard URL` sends).',
    );
  }
  const parsed = wireDecisionSchema.safeParse(json);
  if (!parsed.success) {
    const unsigned = json !== null && typeof json === 'object' && !('signature' in json);
    throw unsigned
      ? refused(
          "an unsigned decision is never accepted over the guard's connection: any guard client could send one.",
          'Approve with your enrolled key from your own terminal: pg-agent approvals approve TICKET --guard URL.',
        )
      : new AgentError(
          'BAD_INPUT',
          `pg_agent.decide: not a signed decision (${parsed.error.issues[0]?.path.join('.') ?? 'shape'}).`,
        );
  }
  return parsed.data;
}

/**
 * Why the broker must not record this decision on this ticket, or undefined: the same checks as its executor
 * (signature by an approver of the pinned policy, over this ticket's content, this database and policy version).
 */
export function wireDecisionProblem(
  ticket: Ticket,
  decision: WireDecision,
  mode: SignedMode,
  now: Date,
): string | undefined {
  if (decision.ticket !== ticket.id) return `the decision is for ticket ${decision.ticket}, not ${ticket.id}`;
  if (!contentMatchesHash(ticket))
    return `ticket ${ticket.id}'s content does not match its hash (altered in the store)`;
  if (decision.hash !== ticket.sqlHash)
    return `ticket ${ticket.id} changed since it was shown (its hash is not the one signed)`;
  if (new Date(decision.at).toISOString() !== decision.at)
    return "the decision's time is not in the form its signer writes";
  if (Math.abs(now.getTime() - Date.parse(decision.at)) > WIRE_CLOCK_SKEW_MS)
    return `the decision was signed at ${decision.at}, not now (replayed, or a clock more than 5 minutes off)`;
  const approvers = mode.pinned.rules.approvers;
  if (!approvers.some((a) => a.name === decision.signature.keyName))
    return `"${decision.signature.keyName}" is not an approver the admin enrolled (policy version ${mode.pinned.version})`;
  const recorded: TicketDecision = {
    by: decision.by,
    approve: decision.approve,
    at: decision.at,
    hash: decision.hash,
    signature: decision.signature,
  };
  if (signatureState(ticket, recorded, approvers) !== 'verified')
    return `the signature does not verify against ${decision.signature.keyName}'s enrolled key for this ticket`;
  return scopeProblem(recorded, mode, now);
}

/** Default mode (nothing pinned): refused before any passphrase is asked. */
export function requireSignedPolicy(view: BrokerTicketView): RawPinnedPolicy {
  if (!view.policy) {
    throw refused(
      `The guard's database pins no signed policy (default mode): approvals do not travel over the guard's connection, since any guard client could send one.`,
      `Approve as the broker's user on its host (sudo -u pgagent pg-agent-broker approvals approve ${view.ticket.id}), or have the admin pin a signed policy (pg-agent policy init).`,
    );
  }
  return view.policy;
}

/**
 * The person's side: the policy the broker reports, verified against the admin signature it carries, for the
 * database identity the broker reports; refuses when it does not enrol this person's own key. The returned
 * document is what the person's signature will name (its version).
 */
export function verifiedBrokerPolicy(view: BrokerTicketView, key: SigningKey): PolicyDocument {
  const policy = requireSignedPolicy(view);
  const document = verifyPolicy(policy, policy.adminKey, view.database);
  const mine = publicKeyText(key.privateKey);
  if (!document.approvers.some((a) => a.name === key.name && a.publicKey === mine)) {
    throw refused(
      `Your key "${key.name}" is not enrolled in the policy version ${document.version} pinned at the guard's database (admin key ${keyFingerprint(policy.adminKey)}).`,
      'Ask the admin to enrol your public key (pg-agent keys show; pg-agent policy enroll NAME --key=…).',
    );
  }
  return document;
}

/** The ticket the broker sent is whole: its id is the one asked for and its content is what its hash names. */
export function checkViewedTicket(view: BrokerTicketView, id: string): void {
  if (view.ticket.id !== id || !contentMatchesHash(view.ticket)) {
    throw refused(
      `The guard answered a ticket that is not ${id}, or whose content does not match its hash: nothing is decided.`,
    );
  }
}

/** The person's signed decision on the ticket as shown, for the broker's database and pinned policy version. */
export function signWireDecision(
  view: BrokerTicketView,
  document: PolicyDocument,
  key: SigningKey,
  approve: boolean,
  now: Date,
  comment?: string,
): WireDecision {
  const at = now.toISOString();
  const scope = { database: view.database, policyVersion: document.version };
  const hash = view.ticket.sqlHash;
  const value = signScopedDecision(key.privateKey, view.ticket, hash, approve, at, scope);
  return {
    ticket: view.ticket.id,
    approve,
    by: key.name,
    at,
    hash,
    ...(comment?.trim() ? { comment: comment.trim() } : {}),
    signature: { keyName: key.name, value, scope },
  };
}

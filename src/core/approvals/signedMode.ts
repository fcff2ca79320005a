/**
 * What an executor checks in signed mode (SPEC §5 3a, 6), read on the session that runs the write: whether the
 * database pins a signed policy and keeps an execution ledger, and whether a ticket's decisions are signatures
 * that count here — by an approver of the pinned policy, for this database's identity, under the pinned policy
 * version, within a ticket's lifetime. The ticket's status field is never what lets a write run.
 */
import type { DbSession } from '../db/db';
import type { DatabaseIdentity } from '../db/databaseIdentity';
import { databaseIdentity } from '../db/databaseIdentity';
import { AgentError } from '../platform/errors';
import type { ApprovalRules } from './approvalPolicy';
import { authorizeBy, missingApprovals, NO_APPROVAL_RULES } from './approvalPolicy';
import { SCHEMA_PRESENCE_SQL } from './pgagentSchema';
import type { PinnedPolicy } from './pinnedPolicy';
import { readPinnedPolicy } from './pinnedPolicy';
import { keyFingerprint } from './policyDocument';
import type { DecisionScope, Ticket, TicketDecision } from './ticket';
import { TICKET_TTL_MS } from './ticket';

export interface SignedMode {
  identity: DatabaseIdentity;
  pinned: PinnedPolicy;
}

export interface ExecutionGuards {
  /** Set when the database pins a signed policy. */
  signed?: SignedMode;
  /** pgagent.executions exists: every execution is recorded in it, in the write's transaction. */
  ledger: boolean;
}

/** One catalog query in default mode; in signed mode also the identity and the verified pinned policy. */
export async function executionGuards(session: DbSession): Promise<ExecutionGuards> {
  const presence = await session.query<{ pinned: boolean; ledger: boolean }>(SCHEMA_PRESENCE_SQL);
  const row = presence.rows[0];
  if (!row?.pinned) return { ledger: row?.ledger === true };
  const identity = await databaseIdentity(session);
  const pinned = await readPinnedPolicy(session, identity);
  if (!pinned) return { ledger: row.ledger };
  if (!row.ledger) {
    throw new AgentError(
      'APPROVAL_POLICY',
      'This database pins a signed approval policy but its execution ledger (pgagent.executions) is gone: nothing runs, since a replay could not be refused.',
      'Ask the admin who pinned it; the ledger is never removed by pg-agent.',
    );
  }
  return { signed: { identity, pinned }, ledger: true };
}

/** Why a decision does not count in signed mode, or undefined when its signature's scope fits. */
export function scopeProblem(decision: TicketDecision, mode: SignedMode, now: Date): string | undefined {
  const signature = decision.signature;
  if (!signature) return 'it is not signed';
  const scope = signature.scope;
  if (!scope)
    return 'its signature does not cover the database and the policy version (approve again from a terminal that reaches this database)';
  if (scope.database !== mode.identity.key)
    return `it was signed for the database ${scope.database}, not this one (${mode.identity.key})`;
  if (scope.policyVersion !== mode.pinned.version)
    return `it was signed under policy version ${scope.policyVersion}, and version ${mode.pinned.version} is pinned now`;
  const at = Date.parse(decision.at);
  if (!Number.isFinite(at) || now.getTime() - at > TICKET_TTL_MS || at - now.getTime() > 5 * 60_000)
    return `it was signed at ${decision.at}, outside a ticket's lifetime`;
  return undefined;
}

export function authorizeSigned(
  mode: SignedMode,
  now: () => Date = () => new Date(),
): (ticket: Ticket) => AgentError | undefined {
  return (ticket) => {
    const when = now();
    const notCounted: string[] = [];
    const counted = ticket.decisions.filter((d) => {
      if (!d.approve || d.hash !== ticket.sqlHash) return false;
      const problem = scopeProblem(d, mode, when);
      if (problem) notCounted.push(`${d.by}'s approval (${problem})`);
      return problem === undefined;
    });
    // The rules' words name the workspace's settings; here they come from the pinned document.
    const missing = missingApprovals({ ...ticket, decisions: counted }, mode.pinned.rules).map((m) =>
      m
        .replaceAll('approval.approvers', 'the approvers the admin enrolled')
        .replaceAll('approval.policy.', "the pinned policy's "),
    );
    if (missing.length === 0) return undefined;
    return new AgentError(
      'APPROVAL_POLICY',
      `Ticket ${ticket.id} may not run on this database (signed mode: policy version ${mode.pinned.version} pinned by the admin key ${keyFingerprint(mode.pinned.adminKey)}): it needs ${missing.join('; and ')}${notCounted.length > 0 ? `. Not counted: ${notCounted.join('; ')}` : ''}.`,
      `Approvals count only as signatures of approvers the admin enrolled, typed with their passphrase: \`pg-agent approvals approve ${ticket.id}\` in a terminal, by the right person, then run it again.`,
    );
  };
}

/** The workspace's rules and, in signed mode, the pinned ones: a ticket must satisfy both. */
export function authorizeExecution(
  rules: ApprovalRules | undefined,
  signed: SignedMode | undefined,
): (ticket: Ticket) => AgentError | undefined {
  const workspace = authorizeBy(rules ?? NO_APPROVAL_RULES);
  if (!signed) return workspace;
  const pinned = authorizeSigned(signed);
  return (ticket) => pinned(ticket) ?? workspace(ticket);
}

/**
 * What a signer binds into a decision's signature (read from the database the signer reaches): its identity and
 * the pinned policy version (0 when none is pinned). Undefined when the database cannot say who it is (the
 * embedded sample database): the signature then covers the ticket alone, which signed mode does not count.
 */
export async function decisionScope(session: DbSession): Promise<DecisionScope | undefined> {
  let identity: DatabaseIdentity;
  try {
    identity = await databaseIdentity(session);
  } catch {
    return undefined;
  }
  const pinned = await readPinnedPolicy(session, identity);
  return { database: identity.key, policyVersion: pinned?.version ?? 0 };
}

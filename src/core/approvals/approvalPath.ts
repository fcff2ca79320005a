/**
 * The one approval path (SPEC §5.3) for asks, job writes and job plans: a person's decision is recorded
 * on the ticket (checked against what they saw, signed when they have a key), and a run waiting on a
 * ticket goes on from the ticket's state alone; the VS Code host and the CLI only call these functions.
 */
import type { KeyObject } from 'node:crypto';
import { AgentError } from '../platform/errors';
import { signDecision, signScopedDecision } from './decisionSignature';
import type { DecisionScope, Ticket } from './ticket';
import { ticketNotFound } from './ticketRules';
import type { TicketStore } from './ticketStore';

/** What a decided ticket means for the run that waits on it: the one decision type of every graph. */
export interface ApprovalDecision {
  approve: boolean;
  by: string;
  comment?: string;
}

/** The caller's signing key (see keyFiles.ts): its name is the approver's name. */
export interface SigningKey {
  name: string;
  privateKey: KeyObject;
}

export interface DecisionRequest {
  approve: boolean;
  /** The person deciding; with a key it must be the key's name (or left out). */
  by?: string;
  comment?: string;
  /** The hash of the SQL or plan the person looked at: a ticket for another version refuses the decision. */
  seenHash?: string;
  key?: SigningKey;
  /** Signed mode: the database identity and policy version the signature also binds (read by the signer). */
  scope?: DecisionScope;
  now?: Date;
}

/** Records a person's decision on a ticket; signs it when a key is given. */
export async function decideTicket(store: TicketStore, ticketId: string, request: DecisionRequest): Promise<Ticket> {
  const by = request.key?.name ?? request.by;
  if (by === undefined || by.trim() === '')
    throw new AgentError('BAD_INPUT', 'A decision needs the name of the person making it.');
  if (request.key && request.by !== undefined && request.by !== request.key.name) {
    throw new AgentError(
      'BAD_INPUT',
      `You sign with the key "${request.key.name}", so you decide as ${request.key.name}, not as "${request.by}".`,
      'Leave out --by, or pick the key of that name with --key.',
    );
  }
  const comment = request.comment?.trim() ? { comment: request.comment.trim() } : {};
  if (!request.key) {
    return store.decide(ticketId, {
      approve: request.approve,
      by,
      ...comment,
      ...(request.seenHash !== undefined ? { seenHash: request.seenHash } : {}),
      ...(request.now ? { now: request.now } : {}),
    });
  }
  const ticket = await store.get(ticketId);
  if (!ticket) throw ticketNotFound(ticketId, 'the ticket store');
  // What is signed is the hash the person saw, which the store then insists is still the ticket's.
  const hash = request.seenHash ?? ticket.sqlHash;
  const now = request.now ?? new Date();
  const at = now.toISOString();
  const signature = request.scope
    ? {
        keyName: request.key.name,
        value: signScopedDecision(request.key.privateKey, ticket, hash, request.approve, at, request.scope),
        scope: request.scope,
      }
    : { keyName: request.key.name, value: signDecision(request.key.privateKey, ticketId, hash, request.approve, at) };
  return store.decide(ticketId, { approve: request.approve, by, ...comment, seenHash: hash, now, signature });
}

/**
 * What a ticket's state means for the run waiting on it; undefined while nobody has decided. Fail closed:
 * only an APPROVED ticket lets the run go on.
 */
export function decisionOf(ticket: Ticket | undefined): ApprovalDecision | undefined {
  if (!ticket || ticket.status === 'PENDING_APPROVAL') return undefined;
  const last = ticket.decisions.at(-1);
  if (ticket.status === 'EXPIRED')
    return { approve: false, by: 'pg-agent', comment: `ticket ${ticket.id} expired before anyone decided` };
  const approve = ticket.status === 'APPROVED';
  const base = { approve, by: last?.by ?? 'pg-agent' };
  if (!approve && ticket.status !== 'REJECTED')
    return { ...base, comment: `ticket ${ticket.id} is ${ticket.status}: it cannot be used again` };
  return last?.comment !== undefined ? { ...base, comment: last.comment } : base;
}

/** The ticket's decision as it is now in the store. */
export async function ticketDecision(store: TicketStore, ticketId: string): Promise<ApprovalDecision | undefined> {
  return decisionOf(await store.get(ticketId));
}

/**
 * Resumes a run held on a ticket once the ticket is decided (here, in another window, by a teammate over
 * Redis); while it is still pending the run stays where it is.
 */
export async function resumeWhenDecided<T>(
  store: TicketStore,
  ticketId: string,
  resume: (decision: ApprovalDecision) => Promise<T>,
  stay: () => T,
): Promise<T> {
  const decision = await ticketDecision(store, ticketId);
  return decision ? resume(decision) : stay();
}

/**
 * The rules every ticket store enforces the same way: how a ticket is made, which transitions are
 * allowed, and the errors a person sees when a ticket cannot be used.
 */
import { AgentError } from '../errors';
import type { Ticket, TicketEvent, TicketStatus } from './ticket';
import { sqlHash, TICKET_TTL_MS } from './ticket';
import type { Decision, ExecutionOutcome, NewTicket } from './ticketStore';
import { SYSTEM_ACTOR } from './ticketStore';

export function buildTicket(input: NewTicket, id: string): Ticket {
  const now = input.now ?? new Date();
  const ttlMs = input.ttlMs ?? TICKET_TTL_MS;
  if (input.sql.trim() === '') throw new AgentError('BAD_INPUT', 'A ticket needs the SQL it approves; it was empty.');
  if (input.connection === '') throw new AgentError('BAD_INPUT', 'A ticket needs the connection it is for.');
  requirePerson(input.createdBy, 'creator');
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new AgentError('BAD_INPUT', `A ticket's lifetime must be a positive number of milliseconds, not ${ttlMs}.`);
  }
  const createdAt = now.toISOString();
  return {
    id,
    sql: input.sql,
    sqlHash: sqlHash(input.sql),
    connection: input.connection,
    impact: input.impact,
    risk: input.impact.risk,
    createdBy: input.createdBy,
    createdAt,
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
    status: 'PENDING_APPROVAL',
    history: [{ action: 'created', by: input.createdBy, at: createdAt }],
  };
}

function requirePerson(by: string, role: string): void {
  if (by.trim() === '') throw new AgentError('BAD_INPUT', `The ${role} of a ticket must be named; it was empty.`);
}

/**
 * What a transition did: the ticket as it now is, whether it must be stored, and the error to raise
 * after storing it (an expiry found while deciding or claiming is stored, and still refused).
 */
export interface TransitionResult {
  ticket: Ticket;
  changed: boolean;
  error?: AgentError;
}

type Rule = (ticket: Ticket) => TransitionResult;

function withEvent(ticket: Ticket, status: TicketStatus, event: TicketEvent): Ticket {
  return { ...ticket, status, history: [...ticket.history, event] };
}

function event(action: TicketEvent['action'], by: string, at: Date, comment?: string): TicketEvent {
  const base = { action, by, at: at.toISOString() };
  return comment === undefined || comment === '' ? base : { ...base, comment };
}

/** Expiry is only meaningful while a ticket still waits for a decision or for its execution. */
export function isExpiredAt(ticket: Ticket, now: Date): boolean {
  if (ticket.status !== 'PENDING_APPROVAL' && ticket.status !== 'APPROVED') return false;
  // Written as "not still valid" so an unparsable time counts as expired: fail closed.
  return !(Date.parse(ticket.expiresAt) > now.getTime());
}

export function expireRule(now: Date): Rule {
  return (ticket) => {
    if (!isExpiredAt(ticket, now)) return { ticket, changed: false };
    return {
      ticket: withEvent(ticket, 'EXPIRED', { action: 'expired', by: SYSTEM_ACTOR, at: ticket.expiresAt }),
      changed: true,
    };
  };
}

export function decideRule(decision: Decision): Rule {
  requirePerson(decision.by, 'approver');
  const now = decision.now ?? new Date();
  return (current) => {
    const expiry = expireRule(now)(current);
    const ticket = expiry.ticket;
    if (ticket.status !== 'PENDING_APPROVAL') return { ...expiry, error: alreadyDecided(ticket) };
    const next = decision.approve
      ? withEvent(ticket, 'APPROVED', event('approved', decision.by, now, decision.comment))
      : withEvent(ticket, 'REJECTED', event('rejected', decision.by, now, decision.comment));
    return { ticket: next, changed: true };
  };
}

export function claimRule(expected: { sqlHash: string; connection: string }, now: Date = new Date()): Rule {
  return (current) => {
    const expiry = expireRule(now)(current);
    const ticket = expiry.ticket;
    if (ticket.status !== 'APPROVED') return { ...expiry, error: notUsable(ticket) };
    // Nothing below stores anything: a ticket that does not match is refused and stays APPROVED, so the
    // SQL that was really approved can still run.
    const refuse = (error: AgentError): TransitionResult => ({ ticket, changed: false, error });
    if (sqlHash(ticket.sql) !== ticket.sqlHash) {
      return refuse(
        new AgentError(
          'APPROVAL_SQL_MISMATCH',
          `Ticket ${ticket.id} no longer matches its own SQL: it was altered after it was created.`,
          'Do not run it. Run the SQL again to create a new ticket, and find out who edited the stored ticket.',
        ),
      );
    }
    if (expected.sqlHash !== ticket.sqlHash) {
      return refuse(
        new AgentError(
          'APPROVAL_SQL_MISMATCH',
          `The SQL to run is not the SQL ticket ${ticket.id} approved (it was edited after approval).`,
          'Run the edited SQL to create a new ticket and ask for approval again.',
        ),
      );
    }
    if (expected.connection !== ticket.connection) {
      return refuse(
        new AgentError(
          'APPROVAL_CONNECTION_MISMATCH',
          `Ticket ${ticket.id} approves this SQL on ${ticket.connection}, not on ${expected.connection}.`,
          `Switch to ${ticket.connection} to run it, or ask for a new approval on this database.`,
        ),
      );
    }
    return { ticket: withEvent(ticket, 'EXECUTING', event('claimed', SYSTEM_ACTOR, now)), changed: true };
  };
}

export function finishRule(outcome: ExecutionOutcome): Rule {
  requirePerson(outcome.by, 'executor');
  const now = outcome.now ?? new Date();
  return (ticket) => {
    if (ticket.status === 'EXECUTING') {
      const next = outcome.ok
        ? withEvent(ticket, 'EXECUTED', event('executed', outcome.by, now, outcome.comment))
        : withEvent(ticket, 'FAILED', event('failed', outcome.by, now, outcome.comment));
      return { ticket: next, changed: true };
    }
    if (ticket.status === 'EXECUTED' || ticket.status === 'FAILED') {
      return { ticket, changed: false, error: notUsable(ticket) };
    }
    return {
      ticket,
      changed: false,
      error: new AgentError(
        'INTERNAL',
        `Ticket ${ticket.id} is ${ticket.status}, not being executed: there is no execution to record an outcome for.`,
        'Claim the ticket before executing its SQL.',
      ),
    };
  };
}

function lastEvent(ticket: Ticket, actions: TicketEvent['action'][]): TicketEvent | undefined {
  for (let i = ticket.history.length - 1; i >= 0; i--) {
    const e = ticket.history[i];
    if (e && actions.includes(e.action)) return e;
  }
  return undefined;
}

function describeEvent(e: TicketEvent | undefined): string {
  if (!e) return '';
  return ` by ${e.by} at ${e.at}${e.comment ? ` ("${e.comment}")` : ''}`;
}

function alreadyDecided(ticket: Ticket): AgentError {
  if (ticket.status === 'EXPIRED' || ticket.status === 'REJECTED') return notUsable(ticket);
  const decision = lastEvent(ticket, ['approved', 'rejected']);
  return new AgentError(
    'APPROVAL_ALREADY_USED',
    `Ticket ${ticket.id} was already ${decision?.action ?? 'decided'}${describeEvent(decision)}; a decision is final.`,
    'To decide differently, run the SQL again to create a new ticket.',
  );
}

/** Why a ticket that is not APPROVED cannot be executed, in words that say what to do next. */
export function notUsable(ticket: Ticket): AgentError {
  switch (ticket.status) {
    case 'PENDING_APPROVAL':
      return new AgentError(
        'APPROVAL_NOT_APPROVED',
        `Ticket ${ticket.id} is still waiting for a person's approval.`,
        `Approve it in VS Code or with \`pg-agent approvals approve ${ticket.id}\`, then run it again.`,
      );
    case 'REJECTED':
      return new AgentError(
        'APPROVAL_REJECTED',
        `Ticket ${ticket.id} was rejected${describeEvent(lastEvent(ticket, ['rejected']))}.`,
        'Change the SQL as asked and run it again to create a new ticket.',
      );
    case 'EXPIRED':
      return new AgentError(
        'APPROVAL_EXPIRED',
        `Ticket ${ticket.id} expired at ${ticket.expiresAt} before it was used.`,
        'Run the SQL again to create a new ticket and ask for approval again.',
      );
    case 'EXECUTING':
    case 'EXECUTED':
    case 'FAILED': {
      const used = lastEvent(ticket, ['claimed']);
      return new AgentError(
        'APPROVAL_ALREADY_USED',
        `Ticket ${ticket.id} was already used (${ticket.status}, claimed at ${used?.at ?? 'an unknown time'}); ` +
          'an approval runs once.',
        'Run the SQL again to create a new ticket if it has to run again.',
      );
    }
    case 'APPROVED':
      return new AgentError('INTERNAL', `Ticket ${ticket.id} is approved and usable.`);
  }
}

export function ticketNotFound(id: string, where: string): AgentError {
  return new AgentError(
    'APPROVAL_NOT_FOUND',
    `There is no approval ticket ${id} in ${where}.`,
    'Check the id with `pg-agent approvals list`; tickets live where they were created ' +
      '(Redis, or .pgagent/approvals/ of that workspace).',
  );
}

/** Newest first; ties (same millisecond) by id so every store lists the same order. */
export function newestFirst(a: Ticket, b: Ticket): number {
  return b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);
}

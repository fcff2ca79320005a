/**
 * The rules every ticket store enforces the same way: how a ticket is made, which transitions are
 * allowed, and the errors a person sees when a ticket cannot be used.
 */
import { createHash } from 'node:crypto';
import { AgentError } from '../platform/errors';
import type { Ticket, TicketDecision, TicketEvent, TicketStatus } from './ticket';
import { contentMatchesHash, ticketHash, TICKET_TTL_MS, transactionSql } from './ticket';
import type { ClaimRequest, TicketDecisionRequest, ExecutionOutcome, NewTicket } from './ticketStore';
import { SYSTEM_ACTOR } from './ticketStore';

export function buildTicket(input: NewTicket, id: string): Ticket {
  const now = input.now ?? new Date();
  const ttlMs = input.ttlMs ?? TICKET_TTL_MS;
  const kind = input.kind ?? 'write';
  if (input.sql.trim() === '')
    throw new AgentError(
      'BAD_INPUT',
      `A ticket needs the ${kind === 'plan' ? 'plan' : 'SQL'} it approves; it was empty.`,
    );
  if ((kind === 'plan') !== (input.plan !== undefined)) {
    throw new AgentError('INTERNAL', 'A plan ticket needs its job and review cycle, and only a plan ticket has them.');
  }
  if (input.connection === '') throw new AgentError('BAD_INPUT', 'A ticket needs the connection it is for.');
  const guardTransaction = input.origin === 'guardTransaction';
  if (
    guardTransaction !== (input.transaction !== undefined) ||
    (guardTransaction &&
      (kind !== 'write' ||
        input.transaction?.statements.length === 0 ||
        input.sql !== transactionSql(input.transaction?.statements ?? [])))
  ) {
    throw new AgentError(
      'INTERNAL',
      'A guard transaction ticket needs its statements (its SQL is theirs, in order), and only such a ticket has them.',
    );
  }
  requirePerson(input.createdBy, 'creator');
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new AgentError('BAD_INPUT', `A ticket's lifetime must be a positive number of milliseconds, not ${ttlMs}.`);
  }
  const createdAt = now.toISOString();
  return {
    id,
    kind,
    sql: input.sql,
    sqlHash: ticketHash(input),
    connection: input.connection,
    impact: input.impact,
    risk: input.impact.risk,
    createdBy: input.createdBy,
    createdAt,
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
    status: 'PENDING_APPROVAL',
    history: [{ action: 'created', by: input.createdBy, at: createdAt }],
    decisions: [],
    ...(input.plan ? { plan: input.plan } : {}),
    ...(input.origin ? { origin: input.origin } : {}),
    ...(input.transaction ? { transaction: input.transaction } : {}),
    ...(input.matchKey !== undefined ? { matchKey: input.matchKey } : {}),
  };
}

/** The key `findLive` looks a ticket up by (its connection is the other half). */
export function matchKeyOf(ticket: Ticket): string {
  return ticket.matchKey ?? ticket.sqlHash;
}

/** The one name of a (connection, match key) pair in a store's live index: a fixed-length hex digest. */
export function liveIndexName(connection: string, key: string): string {
  return createHash('sha256').update(`${connection}\n${key}`, 'utf8').digest('hex').slice(0, 40);
}

/** PENDING_APPROVAL or APPROVED: a ticket that can still be decided or run. */
export function isLive(ticket: Ticket): boolean {
  return ticket.status === 'PENDING_APPROVAL' || ticket.status === 'APPROVED';
}

/** A status no ticket leaves (EXECUTING can go back to APPROVED when its execution is released). */
export function isSettled(ticket: Ticket): boolean {
  return (
    ticket.status === 'REJECTED' ||
    ticket.status === 'EXPIRED' ||
    ticket.status === 'EXECUTED' ||
    ticket.status === 'FAILED'
  );
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

export function decideRule(decision: TicketDecisionRequest): Rule {
  requirePerson(decision.by, 'approver');
  const now = decision.now ?? new Date();
  return (current) => {
    const expiry = expireRule(now)(current);
    const ticket = expiry.ticket;
    if (decision.seenHash !== undefined && decision.seenHash !== ticket.sqlHash) {
      return { ...expiry, error: staleDecision(ticket) };
    }
    const entry: TicketDecision = {
      by: decision.by,
      approve: decision.approve,
      at: now.toISOString(),
      hash: ticket.sqlHash,
      ...(decision.comment !== undefined && decision.comment !== '' ? { comment: decision.comment } : {}),
      ...(decision.signature ? { signature: decision.signature } : {}),
    };
    const recorded = (status: TicketStatus): Ticket => ({
      ...withEvent(
        ticket,
        status,
        event(decision.approve ? 'approved' : 'rejected', decision.by, now, decision.comment),
      ),
      decisions: [...ticket.decisions, entry],
    });
    // A second person's approval of an approved ticket counts towards a two-person rule; the ticket stays APPROVED.
    if (
      ticket.status === 'APPROVED' &&
      decision.approve &&
      !ticket.decisions.some((d) => d.approve && d.by === decision.by)
    ) {
      return { ticket: recorded('APPROVED'), changed: true };
    }
    if (ticket.status !== 'PENDING_APPROVAL') return { ...expiry, error: alreadyDecided(ticket) };
    return { ticket: recorded(decision.approve ? 'APPROVED' : 'REJECTED'), changed: true };
  };
}

function staleDecision(ticket: Ticket): AgentError {
  const what = ticket.kind === 'plan' ? 'plan' : 'SQL';
  return new AgentError(
    'APPROVAL_STALE',
    `Ticket ${ticket.id} is for another version of the ${what} than the one you decided on; your decision was not recorded.`,
    ticket.kind === 'plan'
      ? 'The plan changed since you looked at it: read the plan as it is now and decide again.'
      : 'Look at the SQL and impact again and decide on what is there now.',
  );
}

export function claimRule(request: ClaimRequest): Rule {
  requirePerson(request.by, 'executor');
  const now = request.now ?? new Date();
  return (current) => {
    const expiry = expireRule(now)(current);
    const ticket = expiry.ticket;
    if (ticket.status !== 'APPROVED') return { ...expiry, error: notUsable(ticket) };
    // Nothing below stores anything: a ticket that does not match is refused and stays APPROVED, so the
    // SQL that was really approved can still run, and a refusal by policy does not spend the ticket.
    const refuse = (error: AgentError): TransitionResult => ({ ticket, changed: false, error });
    if (!contentMatchesHash(ticket) || ticket.decisions.some((d) => d.hash !== ticket.sqlHash)) {
      return refuse(
        new AgentError(
          'APPROVAL_SQL_MISMATCH',
          `Ticket ${ticket.id} no longer matches its own ${ticket.kind === 'plan' ? 'plan' : 'SQL'}: it was altered after it was created or approved.`,
          'Do not run it. Run the SQL again to create a new ticket, and find out who edited the stored ticket.',
        ),
      );
    }
    if (request.connection !== ticket.connection) {
      return refuse(
        new AgentError(
          'APPROVAL_CONNECTION_MISMATCH',
          `Ticket ${ticket.id} approves this ${ticket.kind === 'plan' ? 'plan' : 'SQL'} on ${ticket.connection}, not on ${request.connection}.`,
          `Switch to ${ticket.connection} to run it, or ask for a new approval on this database.`,
        ),
      );
    }
    if (request.xid !== undefined && ticket.kind === 'plan') {
      return refuse(
        new AgentError(
          'BAD_INPUT',
          `Ticket ${ticket.id} approves a plan, not SQL: it cannot be executed as a write.`,
          `Its job goes on with it: pg-agent job continue ${ticket.plan?.jobId ?? ''}`.trim(),
        ),
      );
    }
    const refused = request.authorize?.(ticket);
    if (refused) return refuse(refused);
    if (request.xid === undefined) {
      if (ticket.kind === 'write')
        return refuse(
          new AgentError('INTERNAL', `Ticket ${ticket.id} is a write: it is claimed by the transaction that runs it.`),
        );
      return { ticket: withEvent(ticket, 'EXECUTING', event('claimed', request.by, now)), changed: true };
    }
    const claimed = withEvent(ticket, 'EXECUTING', event('claimed', request.by, now, `transaction ${request.xid}`));
    return {
      ticket: { ...claimed, execution: { xid: request.xid, by: request.by, startedAt: now.toISOString() } },
      changed: true,
    };
  };
}

/** Notes the undo file of the execution `xid` on its EXECUTING ticket. */
export function noteUndoRule(xid: string, undoFile: string): Rule {
  return (ticket) => {
    if (ticket.status !== 'EXECUTING' || ticket.execution?.xid !== xid) {
      return { ticket, changed: false, error: notUsable(ticket) };
    }
    return { ticket: { ...ticket, execution: { ...ticket.execution, undoFile } }, changed: true };
  };
}

export function finishRule(outcome: ExecutionOutcome): Rule {
  requirePerson(outcome.by, 'executor');
  const now = outcome.now ?? new Date();
  const target: TicketStatus = outcome.ok ? 'EXECUTED' : 'FAILED';
  return (ticket) => {
    const sameExecution = outcome.xid === undefined || ticket.execution?.xid === outcome.xid;
    if (ticket.status === 'EXECUTING' && sameExecution) {
      const next = withEvent(
        ticket,
        target,
        event(outcome.ok ? 'executed' : 'failed', outcome.by, now, outcome.comment),
      );
      return { ticket: next, changed: true };
    }
    // Already resolved from pg_xact_status to this very outcome (a reader got there first): nothing to add.
    if (ticket.status === target && sameExecution) return { ticket, changed: false };
    if (ticket.status === 'EXECUTED' || ticket.status === 'FAILED')
      return { ticket, changed: false, error: notUsable(ticket) };
    if (ticket.status === 'EXECUTING') {
      return {
        ticket,
        changed: false,
        error: new AgentError(
          'INTERNAL',
          `Ticket ${ticket.id} is ${ticket.status}${ticket.execution ? ` (transaction ${ticket.execution.xid})` : ''}; ` +
            `it cannot also be recorded as ${target} by this execution.`,
          `Check the database: \`pg-agent approvals show ${ticket.id}\` reads the transaction's real outcome.`,
        ),
      };
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

/** The execution `xid` was rolled back before it did anything: the ticket is APPROVED again (issue 25). */
export function releaseRule(outcome: ExecutionOutcome & { xid: string }): Rule {
  requirePerson(outcome.by, 'executor');
  const now = outcome.now ?? new Date();
  return (ticket) => {
    if (ticket.status !== 'EXECUTING' || ticket.execution?.xid !== outcome.xid)
      return { ticket, changed: false, error: notUsable(ticket) };
    const { execution: _released, ...rest } = ticket;
    return { ticket: withEvent(rest, 'APPROVED', event('released', outcome.by, now, outcome.comment)), changed: true };
  };
}

/**
 * A ticket left EXECUTING, resolved from its transaction's fate in the database: committed → EXECUTED,
 * aborted → FAILED. Anything else (still in progress, or no longer known) leaves it as it is.
 */
export function resolveRule(xid: string, status: 'committed' | 'aborted', now: Date = new Date()): Rule {
  return (ticket) => {
    if (ticket.status !== 'EXECUTING' || ticket.execution?.xid !== xid) return { ticket, changed: false };
    const ok = status === 'committed';
    const comment = ok
      ? `transaction ${xid} committed (read from pg_xact_status after its executor stopped reporting)`
      : `transaction ${xid} did not commit (read from pg_xact_status): nothing was changed`;
    return {
      ticket: withEvent(
        ticket,
        ok ? 'EXECUTED' : 'FAILED',
        event(ok ? 'executed' : 'failed', SYSTEM_ACTOR, now, comment),
      ),
      changed: true,
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

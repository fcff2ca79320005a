/**
 * The ticket store port (SPEC §5.3) and the rules every store enforces the same way: how a ticket is
 * made, which transitions are allowed, and the errors a person sees when a ticket cannot be used.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../errors';
import type { ImpactReport } from '../sql/impactReport';
import type { Ticket, TicketEvent, TicketStatus } from './ticket';
import { sqlHash, TICKET_TTL_MS } from './ticket';

export interface NewTicket {
  sql: string;
  connection: string;
  impact: ImpactReport;
  createdBy: string;
  now?: Date;
  ttlMs?: number;
}

export interface Decision {
  approve: boolean;
  by: string;
  comment?: string;
  now?: Date;
}

export interface ExecutionOutcome {
  ok: boolean;
  by: string;
  comment?: string;
  now?: Date;
}

export interface TicketStore {
  /** A PENDING_APPROVAL ticket for this exact SQL on this connection. */
  create(input: NewTicket): Promise<Ticket>;
  /** A PENDING or APPROVED ticket past its expiry is reported, and stored, as EXPIRED. */
  get(id: string, now?: Date): Promise<Ticket | undefined>;
  /** Newest first. */
  list(options?: { status?: TicketStatus[]; now?: Date }): Promise<Ticket[]>;
  /** PENDING_APPROVAL → APPROVED/REJECTED, atomically: of concurrent decisions exactly one wins. */
  decide(id: string, decision: Decision): Promise<Ticket>;
  /** APPROVED → EXECUTING when the SQL and connection are those approved; single use, atomically. */
  claim(id: string, expected: { sqlHash: string; connection: string }, now?: Date): Promise<Ticket>;
  /** EXECUTING → EXECUTED/FAILED. */
  finish(id: string, outcome: ExecutionOutcome): Promise<Ticket>;
  /** Resolves once the ticket leaves PENDING_APPROVAL, whoever decided it and wherever; rejects when aborted. */
  waitForDecision(id: string, signal?: AbortSignal): Promise<Ticket>;
  close(): Promise<void>;
}

/** Who system events (claims, expiries) are recorded as. */
export const SYSTEM_ACTOR = 'pg-agent';

export const TICKET_ID_PATTERN = /^tkt_[a-z2-7]{20}$/;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export function newTicketId(): string {
  // 256 is a multiple of 32, so taking 5 bits of each random byte keeps every character uniform.
  const bytes = randomBytes(20);
  let id = 'tkt_';
  for (const byte of bytes) id += BASE32[byte & 31] ?? '';
  return id;
}

/** Ids reach file paths and Redis keys: anything but a well-formed id is refused before either is built. */
export function assertTicketId(id: string): void {
  if (!TICKET_ID_PATTERN.test(id)) {
    throw new AgentError(
      'BAD_INPUT',
      `"${id.slice(0, 60)}" is not an approval ticket id.`,
      'Ticket ids look like tkt_ followed by 20 letters and digits; copy it from `pg-agent approvals list`.',
    );
  }
}

const riskSchema = z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']);
const isoTime = z.iso.datetime();

const impactSchema = z.object({
  statements: z.array(z.string()),
  estimatedRows: z.number().nullable(),
  exactRows: z.number().nullable(),
  tables: z.array(
    z.object({
      schema: z.string(),
      name: z.string(),
      via: z.enum(['direct', 'cascade', 'trigger']),
      inserted: z.number(),
      updated: z.number(),
      deleted: z.number(),
    }),
  ),
  risk: riskSchema,
  requiresApproval: z.boolean(),
  wouldFail: z.object({ code: z.string(), message: z.string() }).nullable(),
  previewMs: z.number(),
  warnings: z.array(z.string()),
  foreignKeyActions: z.array(
    z.object({ constraint: z.string(), table: z.string(), references: z.string(), action: z.string() }),
  ),
  triggers: z.array(z.object({ table: z.string(), name: z.string() })),
});

const ticketSchema: z.ZodType<Ticket> = z.object({
  id: z.string().regex(TICKET_ID_PATTERN),
  sql: z.string(),
  sqlHash: z.string(),
  connection: z.string(),
  impact: impactSchema,
  risk: riskSchema,
  createdBy: z.string(),
  createdAt: isoTime,
  expiresAt: isoTime,
  status: z.enum(['PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'EXPIRED', 'EXECUTING', 'EXECUTED', 'FAILED']),
  history: z.array(
    z.object({
      action: z.enum(['created', 'approved', 'rejected', 'expired', 'claimed', 'executed', 'failed']),
      by: z.string(),
      at: isoTime,
      comment: z.string().optional(),
    }),
  ),
});

/**
 * A stored ticket, checked against the Ticket type. Anything else is refused, never half-trusted: the
 * stored id must be the one asked for, so a copied file or key cannot pass for another ticket.
 */
export function parseTicket(text: string, id: string, where: string): Ticket {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw unreadable(id, where, 'it is not valid JSON', error);
  }
  const parsed = ticketSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw unreadable(id, where, first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'bad shape');
  }
  if (parsed.data.id !== id) throw unreadable(id, where, `it holds ticket ${parsed.data.id}`);
  return parsed.data;
}

function unreadable(id: string, where: string, why: string, cause?: unknown): AgentError {
  return new AgentError(
    'APPROVAL_NOT_FOUND',
    `Ticket ${id} in ${where} is not a valid ticket (${why}), so it cannot be used.`,
    'Run the SQL again to create a new ticket and ask for approval again.',
    { cause },
  );
}

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

export interface WaitSource {
  /** The ticket as it now is, expiry applied. */
  get(id: string): Promise<Ticket | undefined>;
  /** Calls onChange whenever the ticket may have changed; resolves once listening, with the way to stop. */
  watch(id: string, onChange: () => void): Promise<() => void>;
  /** Safety net for notifications that never arrive (missed watch events, a pub/sub reconnect). */
  pollMs: number;
  where: string;
  onCheckFailed(error: unknown): void;
}

/**
 * Waits until a ticket leaves PENDING_APPROVAL. The ticket is read once after listening starts, so a
 * decision made just before is not missed, and again when the ticket's expiry comes.
 */
export function waitForDecision(id: string, source: WaitSource, signal?: AbortSignal): Promise<Ticket> {
  return new Promise<Ticket>((resolve, reject) => {
    let settled = false;
    let checking = false;
    let checkAgain = false;
    let readOnce = false;
    let stopWatching: (() => void) | undefined;
    let expiryTimer: NodeJS.Timeout | undefined;
    const pollTimer = setInterval(() => void check(), source.pollMs);

    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(pollTimer);
      clearTimeout(expiryTimer);
      stopWatching?.();
      signal?.removeEventListener('abort', onAbort);
      finish();
    };
    const onAbort = () =>
      settle(() => reject(new DOMException(`Stopped waiting for the decision on ticket ${id}.`, 'AbortError')));

    const check = async (): Promise<void> => {
      if (settled) return;
      if (checking) {
        checkAgain = true;
        return;
      }
      checking = true;
      try {
        const ticket = await source.get(id);
        if (!ticket) throw ticketNotFound(id, source.where);
        readOnce = true;
        if (ticket.status !== 'PENDING_APPROVAL') return settle(() => resolve(ticket));
        clearTimeout(expiryTimer);
        // setTimeout takes at most 2^31-1 ms; the poll covers anything further away.
        const untilExpiry = Math.min(Math.max(Date.parse(ticket.expiresAt) - Date.now() + 20, 0), 2 ** 31 - 1);
        expiryTimer = setTimeout(() => void check(), untilExpiry);
      } catch (error) {
        // The first read decides whether there is anything to wait for; later failures (a Redis blip, a
        // disk hiccup) are retried by the next notification or poll rather than ending a long wait.
        if (!readOnce) settle(() => reject(error instanceof Error ? error : new Error(String(error))));
        else source.onCheckFailed(error);
      } finally {
        checking = false;
      }
      if (checkAgain) {
        checkAgain = false;
        await check();
      }
    };

    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    source.watch(id, () => void check()).then(
      (stop) => {
        if (settled) return stop();
        stopWatching = stop;
        void check();
      },
      (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}

/**
 * The ticket store port (SPEC §5.3): what every store (files, Redis) offers, ticket ids, and how a
 * stored ticket is read back and checked.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../errors';
import type { ImpactReport } from '../sql/impactReport';
import type { Ticket, TicketStatus } from './ticket';
import { sqlHash } from './ticket';

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
  // DDL impact (SPEC §5.4a); the defaults read tickets stored before these fields existed.
  previewed: z.boolean().default(true),
  locks: z
    .array(
      z.object({
        table: z.string(),
        mode: z.enum(['ACCESS SHARE', 'ROW SHARE', 'ROW EXCLUSIVE', 'SHARE UPDATE EXCLUSIVE', 'SHARE', 'SHARE ROW EXCLUSIVE', 'EXCLUSIVE', 'ACCESS EXCLUSIVE']),
        blocks: z.enum(['reads and writes', 'writes', 'nothing']),
        work: z.enum(['instant', 'scan', 'rewrite']),
        rows: z.number().nullable(),
        bytes: z.number().nullable(),
        waitsBehind: z.number(),
        why: z.string(),
      }),
    )
    .default([]),
  rewrites: z.array(z.string()).default([]),
  dependents: z.array(z.object({ kind: z.string(), name: z.string(), effect: z.string() })).default([]),
  lint: z
    .array(
      z.object({
        rule: z.string(),
        severity: z.enum(['error', 'warning', 'info']),
        message: z.string(),
        advice: z.string(),
        saferSql: z.string().optional(),
      }),
    )
    .default([]),
  transactional: z.boolean().default(true),
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

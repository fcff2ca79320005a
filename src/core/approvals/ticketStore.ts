/**
 * The ticket store port (SPEC §5.3): what every store (files, Redis) offers, ticket ids, and how a
 * stored ticket is read back and checked.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import { TICKET_ID_PATTERN } from '../../shared/ids';
import type { ImpactReport } from '../../shared/impactReport';
import type {
  DecisionSignature,
  GuardTransactionRecord,
  PlanBinding,
  Ticket,
  TicketOrigin,
  TicketStatus,
} from './ticket';

export interface NewTicket {
  /** Default "write". */
  kind?: 'write' | 'plan';
  sql: string;
  connection: string;
  impact: ImpactReport;
  /** Who asked for it (recorded as requestedBy; self-approval rules compare against it). */
  createdBy: string;
  plan?: PlanBinding;
  /** Default 'statement'; 'guardTransaction' needs `transaction`, and `sql` must be transactionSql() of its statements. */
  origin?: TicketOrigin;
  transaction?: GuardTransactionRecord;
  /**
   * What `findLive` finds this ticket by, besides its connection: default its `sqlHash`. A guard transaction's
   * ticket is found by what its retry can compute before it knows the ticket (e.g. its statements' key).
   */
  matchKey?: string;
  now?: Date;
  ttlMs?: number;
}

/** A person's decision on a ticket (approve or reject), as given to the store to record. */
export interface TicketDecisionRequest {
  approve: boolean;
  by: string;
  comment?: string;
  /** The hash of the SQL or plan the person saw; when given, a ticket with another hash refuses the decision (stale). */
  seenHash?: string;
  /** When the decision was made (what is signed); default now. */
  now?: Date;
  signature?: DecisionSignature;
}

/** What an execution claims a ticket with. */
export interface ClaimRequest {
  connection: string;
  /** pg_current_xact_id() of the transaction that will run a write ticket, already open (plan tickets have none). */
  xid?: string;
  by: string;
  /** Checks signatures and approval.policy; an error refuses the claim and leaves the ticket APPROVED. */
  authorize?: (ticket: Ticket) => AgentError | undefined;
  now?: Date;
}

export type XactStatus = 'committed' | 'aborted' | 'in progress';

/**
 * Reads the fate of an execution's transaction from its database (pg_xact_status). Undefined when that
 * database cannot be asked now: the ticket then stays EXECUTING, which is the truth as far as anyone knows.
 */
export interface ExecutionResolver {
  status(ticket: Ticket): Promise<XactStatus | undefined>;
  /** Called once a ticket has been resolved to FAILED or EXECUTED (e.g. to void an undo script that never applied). */
  resolved?(ticket: Ticket): Promise<void>;
}

export interface ExecutionOutcome {
  ok: boolean;
  by: string;
  comment?: string;
  now?: Date;
  /** The transaction whose outcome this is: an outcome for another execution is refused. */
  xid?: string;
}

export interface TicketStore {
  /** A PENDING_APPROVAL ticket for this exact SQL on this connection. */
  create(input: NewTicket): Promise<Ticket>;
  /** A PENDING or APPROVED ticket past its expiry is reported, and stored, as EXPIRED. */
  get(id: string, now?: Date): Promise<Ticket | undefined>;
  /** Newest first. */
  list(options?: { status?: TicketStatus[]; now?: Date }): Promise<Ticket[]>;
  /**
   * The live tickets (PENDING_APPROVAL or APPROVED, unexpired) of this connection whose match key (`sqlHash`
   * unless the ticket was created with a `matchKey`) is `key`, newest first. Read through an index kept at
   * creation, never by listing every ticket; tickets stored before the index existed are indexed once.
   */
  findLive(connection: string, key: string, now?: Date): Promise<Ticket[]>;
  /**
   * PENDING_APPROVAL → APPROVED/REJECTED, atomically: of concurrent decisions exactly one wins. A second
   * person's approval of an APPROVED ticket is added to its decisions (two-person rules).
   */
  decide(id: string, decision: TicketDecisionRequest): Promise<Ticket>;
  /**
   * APPROVED → EXECUTING with the executing transaction's id, when the ticket's SQL still matches its hash,
   * the connection is the approved one and `authorize` agrees; single use, atomically.
   */
  claim(id: string, request: ClaimRequest): Promise<Ticket>;
  /** Records where the undo script was written (before COMMIT) on the EXECUTING ticket of that transaction. */
  noteUndo(id: string, xid: string, undoFile: string): Promise<Ticket>;
  /** EXECUTING → EXECUTED/FAILED (a no-op when the ticket was already resolved to that outcome). */
  finish(id: string, outcome: ExecutionOutcome): Promise<Ticket>;
  /**
   * EXECUTING → APPROVED again, for the execution `xid` whose transaction its executor rolled back before it
   * did anything (a lock it could not get in time, issue 25): the approval is not spent. Optional: a store
   * without it records such an execution as FAILED.
   */
  release?(id: string, outcome: ExecutionOutcome & { xid: string }): Promise<Ticket>;
  /** Sets how tickets left EXECUTING are resolved on every read (get, list, waits). */
  setResolver(resolver: ExecutionResolver | undefined): void;
  /** Resolves once the ticket leaves PENDING_APPROVAL, whoever decided it and wherever; rejects when aborted. */
  waitForDecision(id: string, signal?: AbortSignal): Promise<Ticket>;
  close(): Promise<void>;
}

/** Who system events (claims, expiries) are recorded as. */
export const SYSTEM_ACTOR = 'pg-agent';

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

// Loose: fields added to impact reports later (locks, lint, ...) are kept, not stripped, when a ticket is read back.
const impactSchema = z.looseObject({
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
        mode: z.enum([
          'ACCESS SHARE',
          'ROW SHARE',
          'ROW EXCLUSIVE',
          'SHARE UPDATE EXCLUSIVE',
          'SHARE',
          'SHARE ROW EXCLUSIVE',
          'EXCLUSIVE',
          'ACCESS EXCLUSIVE',
        ]),
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
  reach: z
    .array(
      z.object({
        function: z.string(),
        via: z.string(),
        verdict: z.enum(['safe', 'side-effect', 'unknown']),
        effect: z.string().optional(),
      }),
    )
    .default([]),
});

const decisionSchema = z.object({
  by: z.string(),
  approve: z.boolean(),
  at: isoTime,
  hash: z.string(),
  comment: z.string().optional(),
  signature: z
    .object({
      keyName: z.string(),
      value: z.string(),
      scope: z.object({ database: z.string(), policyVersion: z.number().int().nonnegative() }).optional(),
    })
    .optional(),
});

const ticketSchema = z.object({
  id: z.string().regex(TICKET_ID_PATTERN),
  // Tickets written before kinds existed are writes.
  kind: z.enum(['write', 'plan']).default('write'),
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
      action: z.enum(['created', 'approved', 'rejected', 'expired', 'claimed', 'released', 'executed', 'failed']),
      by: z.string(),
      at: isoTime,
      comment: z.string().optional(),
    }),
  ),
  // Tickets written before decisions were kept apart have them only in their history.
  decisions: z.array(decisionSchema).optional(),
  plan: z.object({ jobId: z.string(), cycle: z.number(), title: z.string() }).optional(),
  execution: z
    .object({ xid: z.string(), by: z.string(), startedAt: isoTime, undoFile: z.string().optional() })
    .optional(),
  // Tickets written before origins existed have none: they are 'statement' tickets (isGuardTransaction).
  origin: z.enum(['statement', 'guardTransaction']).optional(),
  transaction: z
    .object({
      statements: z.array(
        z.object({
          sql: z.string(),
          template: z.string(),
          read: z.boolean(),
          varies: z
            .array(
              z.object({
                at: z.number().int().min(0),
                kind: z.enum(['returned', 'uuid', 'timestamp', 'same']),
                value: z.string(),
                from: z.number().int().min(0).optional(),
                row: z.number().int().min(0).optional(),
                column: z.string().optional(),
                fromAt: z.number().int().min(0).optional(),
              }),
            )
            .optional(),
        }),
      ),
      effects: z.array(
        z.object({
          schema: z.string(),
          name: z.string(),
          inserted: z.number(),
          updated: z.number(),
          deleted: z.number(),
        }),
      ),
      rows: z.array(z.object({ schema: z.string(), name: z.string(), keys: z.array(z.string()) })).optional(),
    })
    .optional(),
  matchKey: z.string().max(200).optional(),
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
  const { decisions, ...rest } = parsed.data;
  return {
    ...(rest as Omit<Ticket, 'decisions'>),
    decisions: decisions ?? decisionsFromHistory(parsed.data as Ticket),
  };
}

/** Decisions of a ticket stored before they were kept apart: unsigned, on the ticket's own hash. */
function decisionsFromHistory(ticket: Ticket): Ticket['decisions'] {
  return ticket.history
    .filter((e) => e.action === 'approved' || e.action === 'rejected')
    .map((e) => ({
      by: e.by,
      approve: e.action === 'approved',
      at: e.at,
      hash: ticket.sqlHash,
      ...(e.comment !== undefined ? { comment: e.comment } : {}),
    }));
}

function unreadable(id: string, where: string, why: string, cause?: unknown): AgentError {
  return new AgentError(
    'APPROVAL_NOT_FOUND',
    `Ticket ${id} in ${where} is not a valid ticket (${why}), so it cannot be used.`,
    'Run the SQL again to create a new ticket and ask for approval again.',
    { cause },
  );
}

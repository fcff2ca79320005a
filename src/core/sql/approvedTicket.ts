/**
 * What executing an approved ticket takes and gives (shared by the transactional path, executeApproved.ts,
 * and the one for statements PostgreSQL runs only outside a transaction, executeOutsideTransaction.ts),
 * and the ticket's own SQL parsed again at execution: what runs is what was approved.
 */
import { schemaChanges } from '../db/schemaChanges';
import type { ApprovalRules } from '../approvals/approvalPolicy';
import type { PolicySources } from '../approvals/policyInForce';
import type { Ticket } from '../approvals/ticket';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import type { Classification } from './classification';
import { classifyParsed, classifySql } from './classify';
import { parseSql } from './parse';
import type { ParsedInput } from './parse';
import type { TableEffect } from '../../shared/impactReport';
import type { UndoScript } from './undoCapture';
import type { LockWaitPolicy } from './ddl/lockWait';
import type { DbTextResult } from '../db/db';
import { DEFAULT_SAFETY } from './safetySettings';
import type { QueryHistory } from './history/queryHistory';

/** Where an execution's undo script goes: written before COMMIT, voided if the transaction does not commit. */
export interface UndoSink {
  /** Writes the script; returns where it is (recorded on the ticket). */
  save(undo: UndoScript, header: string): Promise<string>;
  /** The transaction did not commit: the file says so, so nobody "undoes" a write that never happened. */
  markVoid(file: string, reason: string): Promise<void>;
}

export interface ExecuteOptions {
  /** Password-free key of `db` (the ticket must be for this database). */
  connection: string;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /** Approved DDL: one lock try's wait and the number of tries (safetySettings.ts; default 100 ms × 10). */
  ddlLockTimeoutMs?: number;
  ddlLockAttempts?: number;
  /** Extra share of the approved count allowed per table and kind of change (0.1 = 10 %). */
  tolerance: number;
  /** Signatures and approval.policy the approvals must satisfy (default: none configured). */
  approvalRules?: ApprovalRules;
  /** Where the policy in force is read, afresh, when the ticket is claimed (policyInForce.ts). */
  policySources?: PolicySources;
  /** Who runs it (recorded in the ticket's history). */
  by: string;
  undo: UndoSink;
  logger: Logger;
  /** Where the execution is recorded (`.pgagent/history/`), when the surface keeps a history. */
  history?: QueryHistory;
  /**
   * The caller's parse of the SQL it asks to run (the guard's check of a client's identical retry): used as the
   * ticket's parse when its input is exactly the ticket's SQL, so the approved run does not parse it again.
   */
  parsed?: ParsedInput;
}

export interface ExecutionResult {
  ticket: Ticket;
  tables: TableEffect[];
  rows: number;
  undo: UndoScript;
  undoFile: string;
  elapsedMs: number;
  /**
   * The write committed but its outcome could not be recorded on the ticket (the store failed): it still
   * counts as executed, and the ticket is resolved to EXECUTED from pg_xact_status() when next read.
   */
  outcomeNotRecorded?: string;
  /**
   * What each of the ticket's statements returned, in order (fields, rows as text, PostgreSQL's row count);
   * undefined for a statement run with its way back or outside a transaction. The guard answers its client
   * with them (RETURNING rows).
   */
  results?: (DbTextResult | undefined)[];
}

/** The ticket's statements, as parsed from the ticket itself: what runs is what was approved. */
export interface TicketStatements {
  classification: Classification;
}

/**
 * After a committed schema change: announced on the one schema-change event (every schema cache of this process
 * checks that connection's schemas again); a failure is logged (the cache's own freshness check still notices).
 */
export async function invalidateAfterDdl(
  options: Pick<ExecuteOptions, 'connection' | 'logger'>,
  log: Record<string, unknown>,
): Promise<void> {
  await schemaChanges
    .announce({ connection: options.connection })
    .catch((error: unknown) =>
      options.logger.warn('could not empty the schema cache after a schema change', { ...log, error: String(error) }),
    );
}

/** A write ticket's SQL parsed once, before its claim (to pick the execution path and the locks to take first). */
export interface PeekedTicket {
  sql: string;
  parsed: ParsedInput;
  classification: Classification;
}

/**
 * Parses and classifies a write ticket's SQL as read before its claim; throws like classifySql. `given`: a parse
 * of the same text (the parser is a function of the text), taken instead of parsing again.
 */
export function peekTicket(ticket: Ticket, given?: ParsedInput): PeekedTicket | undefined {
  if (ticket.kind !== 'write') return undefined;
  const parsed = given?.input === ticket.sql ? given : parseSql(ticket.sql);
  return { sql: ticket.sql, parsed, classification: classifyParsed(parsed) };
}

/**
 * The ticket's own SQL, parsed here: a ticket whose SQL is not a single write the path allows is refused.
 * `peeked` is the parse of the same ticket read just before its claim (to pick the execution path): it is
 * used only when the claimed ticket's SQL is exactly the text it was made from, so the SQL is parsed once.
 */
export function parseTicket(
  ticket: Ticket,
  peeked?: { sql: string; classification: Classification },
): TicketStatements {
  if (ticket.kind !== 'write') {
    throw new AgentError(
      'BAD_INPUT',
      `Ticket ${ticket.id} approves a plan, not SQL: it cannot be executed as a write.`,
      'Plan tickets move their job on; see `pg-agent job show`.',
    );
  }
  const classification =
    peeked !== undefined && peeked.sql === ticket.sql ? peeked.classification : classifySql(ticket.sql);
  if (classification.decision === 'refuse') {
    throw new AgentError(
      'SQL_REFUSED',
      `Ticket ${ticket.id} holds SQL the safety path refuses: ${classification.reasons.join('; ')}.`,
    );
  }
  return { classification };
}

/** How approved DDL waits for its locks: the options' short waits, else the defaults (100 ms × 10). */
export function lockWaitPolicyOf(
  options: Pick<ExecuteOptions, 'ddlLockTimeoutMs' | 'ddlLockAttempts'>,
): LockWaitPolicy {
  return {
    timeoutMs: options.ddlLockTimeoutMs ?? DEFAULT_SAFETY.ddlLockTimeoutMs,
    attempts: options.ddlLockAttempts ?? DEFAULT_SAFETY.ddlLockAttempts,
  };
}

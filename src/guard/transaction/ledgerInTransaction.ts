/**
 * The claim of an approved client transaction through the guard, with the checks core/sql/executeApproved.ts
 * makes at the same step (SPEC §5 3a, 6), read from the database now, never from the ticket or the workspace:
 * - signed mode (a pinned policy): only the signatures the pinned policy counts approve it (authorizeExecution),
 *   and the policy in force (every layer, authorizeAtClaim) must be satisfied too;
 * - the execution ledger (pgagent.executions): a ticket the ledger holds is refused before anything is claimed,
 *   and the ledger row is inserted in the CLIENT'S OWN upstream transaction, before its COMMIT, so it commits
 *   with the client's writes or neither does. The primary key refuses a replay even when the ticket's file or
 *   Redis key was reset to APPROVED; a concurrent second COMMIT of the same ticket waits on it and is refused.
 */
import { authorizeAtClaim } from '../../core/approvals/policyInForce';
import { alreadyExecuted, assertNotInLedger } from '../../core/approvals/executionLedger';
import { authorizeExecution, executionGuards } from '../../core/approvals/signedMode';
import type { Ticket } from '../../core/approvals/ticket';
import { AgentError } from '../../core/platform/errors';
import type { GuardContext } from '../guardContext';

/** A simple query in the client's upstream session (guardedTransaction.ts's InBand), with the SQLSTATE of its error. */
export interface InBandSession {
  run(sql: string): Promise<{ rows: (string | null)[][]; error?: string; code?: string }>;
}

export interface ClaimRequest {
  ticketId: string;
  connection: string;
  /** The client's upstream transaction (pg_current_xact_id()), recorded on the ticket and in the ledger. */
  xid: string;
  by: string;
}

/**
 * Claims the approved ticket for the client's open transaction and, when the database keeps a ledger, writes
 * its row in that transaction. Throws (nothing claimed) when the ledger or the policy refuses; after the claim,
 * a LedgerRefusal means another execution owns the ledger row (the caller records nothing on the ticket).
 */
export async function claimInClientTransaction(
  context: GuardContext,
  inBand: InBandSession,
  request: ClaimRequest,
): Promise<Ticket> {
  const db = await context.openDb();
  const guards = await executionGuards(db);
  if (guards.ledger) await assertNotInLedger(db, request.ticketId);
  const inForce = await authorizeAtClaim(db, { ...context.settings, connection: request.connection });
  const store = await context.openTicketStore();
  const ticket = await store.claim(request.ticketId, {
    connection: request.connection,
    xid: request.xid,
    by: request.by,
    authorize: (claimed) => authorizeExecution(undefined, guards.signed)(claimed) ?? inForce(claimed),
  });
  if (guards.ledger) await recordInClientTransaction(inBand, ticket, request);
  return ticket;
}

async function recordInClientTransaction(
  inBand: InBandSession,
  ticket: Pick<Ticket, 'id' | 'sqlHash'>,
  request: ClaimRequest,
): Promise<void> {
  const values = [ticket.id, ticket.sqlHash, request.xid, request.by].map(literal).join(', ');
  // Schema-qualified, and the client cannot change how this text is read (standard_conforming_strings and
  // search_path are not among the settings a guard client may SET); E'' escapes hold either way.
  const answer = await inBand.run(
    `INSERT INTO pgagent.executions (ticket_id, sql_hash, xid, by, status) VALUES (${values}, 'done')`,
  );
  if (answer.error === undefined) return;
  if (answer.code === '23505') throw alreadyExecuted(ticket.id, undefined);
  throw new AgentError(
    'DB_QUERY_FAILED',
    `The execution ledger row of ticket ${ticket.id} could not be written: ${answer.error}`,
  );
}

/** A string constant PostgreSQL reads the same whatever standard_conforming_strings says. */
export function literal(text: string): string {
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

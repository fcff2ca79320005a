/**
 * `pg-agent undo <ticket>` and `pg-agent quarantine purge` (SPEC §6, issue 25): the way back from an executed
 * ticket, and the end of a quarantine, are SQL like any other: proposed through the safety path as a held
 * ticket, shown with their impact, and run only once a person approved exactly that SQL.
 */
import { readFile } from 'node:fs/promises';
import type { TicketStore } from '../approvals/ticketStore';
import type { Db } from '../db/db';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import type { ImpactReport } from '../../shared/impactReport';
import type { Ticket } from '../approvals/ticket';
import { runSql } from './runSql';
import type { SafetySettings } from './safetySettings';
import { VOID_MARK } from './writeArtifacts';
import type { QuarantineEntry } from './recovery/quarantineStore';
import { listEntries, purgeSql, restoreSqlOf } from './recovery/quarantineStore';

export interface ProposalRequest {
  connection: string;
  requestedBy: string;
  settings: SafetySettings;
  logger?: Logger;
}

export interface HeldProposal {
  sql: string;
  impact: ImpactReport;
  ticket: Ticket;
  /** Where the SQL came from: the quarantine's entries, or the ticket's undo script (a data change). */
  source: 'quarantine' | 'undo script';
  entries: QuarantineEntry[];
  /** The undo script's file, when the SQL is one (shown instead of the whole script). */
  file?: string;
}

/** Shares and factors no write reaches: the sweeping-write findings never fire. */
const NEVER_SWEEPING = { matchesAllShare: Number.POSITIVE_INFINITY, estimateFactor: Number.POSITIVE_INFINITY };

/** A held ticket that puts back what an executed ticket destroyed or changed. */
export async function proposeUndo(
  db: Db,
  store: TicketStore,
  ticketId: string,
  request: ProposalRequest,
): Promise<HeldProposal> {
  const ticket = await store.get(ticketId);
  if (!ticket)
    throw new AgentError(
      'APPROVAL_NOT_FOUND',
      `There is no ticket ${ticketId}.`,
      'Check the id with `pg-agent approvals list`.',
    );
  if (ticket.status !== 'EXECUTED') {
    throw new AgentError(
      'BAD_INPUT',
      `Ticket ${ticketId} is ${ticket.status}: only an executed ticket has something to undo.`,
      'Undo the ticket that ran; `pg-agent approvals list --status EXECUTED` lists them.',
    );
  }
  const entries = await db.withSession((session) => listEntries(session, { ticket: ticketId }));
  let sql: string;
  let source: HeldProposal['source'];
  if (entries.length > 0) {
    sql = restoreSqlOf(entries);
    source = 'quarantine';
  } else {
    // The impact said so before approval: repeat it rather than offer an undo script that cannot undo DDL.
    const none = ticket.impact.recovery?.find((r) => r.way === 'none');
    if (none)
      throw new AgentError(
        'BAD_INPUT',
        `Ticket ${ticketId} has no way back: ${none.summary.replace(/^No way back: /, '')}`,
        'This was shown in its impact before it was approved.',
      );
    sql = await undoScriptOf(ticket);
    source = 'undo script';
  }
  const outcome = await runSql(db, store, {
    sql,
    connection: request.connection,
    requestedBy: request.requestedBy,
    // An undo script restores exactly the rows its ticket changed: that it matches all of them (every audit row a
    // trigger wrote) is its point, not a sweeping predicate. Its risk and rows are measured like any write's.
    settings:
      source === 'undo script'
        ? { ...request.settings, policy: { ...request.settings.policy, sweepingWrites: NEVER_SWEEPING } }
        : request.settings,
    ...(request.logger ? { logger: request.logger } : {}),
    // Asked again before a decision: the same pending ticket (pendingTicket.ts), as for any statement.
    reusePending: true,
  });
  if (outcome.status !== 'held')
    throw new AgentError(
      'INTERNAL',
      `The way back of ticket ${ticketId} was not held for approval (${outcome.status}).`,
    );
  return {
    sql,
    impact: outcome.impact,
    ticket: outcome.ticket,
    source,
    entries,
    ...(source === 'undo script' && ticket.execution?.undoFile ? { file: ticket.execution.undoFile } : {}),
  };
}

/** A held ticket that drops quarantined things for good: the expired ones, or those named. */
export async function proposePurge(
  db: Db,
  store: TicketStore,
  which: { ids?: readonly string[] },
  request: ProposalRequest,
): Promise<HeldProposal> {
  const ids = which.ids ?? [];
  const all = await db.withSession((session) => listEntries(session, ids.length > 0 ? {} : { expiredOnly: true }));
  const entries = ids.length > 0 ? all.filter((e) => ids.includes(e.id)) : all;
  const unknown = ids.filter((id) => !entries.some((e) => e.id === id));
  if (unknown.length > 0)
    throw new AgentError(
      'BAD_INPUT',
      `Not in the quarantine: ${unknown.join(', ')}.`,
      'See what is there with `pg-agent quarantine list`.',
    );
  if (entries.length === 0)
    throw new AgentError(
      'BAD_INPUT',
      'Nothing in the quarantine has expired; nothing to purge.',
      'Name entries to purge them before they expire: `pg-agent quarantine purge <id>…` (see `pg-agent quarantine list`).',
    );
  const sql = purgeSql(entries);
  const outcome = await runSql(db, store, {
    sql,
    connection: request.connection,
    requestedBy: request.requestedBy,
    settings: request.settings,
    ...(request.logger ? { logger: request.logger } : {}),
    reusePending: true,
  });
  if (outcome.status !== 'held')
    throw new AgentError('INTERNAL', `The purge was not held for approval (${outcome.status}).`);
  return { sql, impact: outcome.impact, ticket: outcome.ticket, source: 'quarantine', entries };
}

/** The undo script a data change left (SPEC §5.6), when it is on this machine and not void. */
async function undoScriptOf(ticket: Ticket): Promise<string> {
  const file = ticket.execution?.undoFile;
  const none = new AgentError(
    'BAD_INPUT',
    `Ticket ${ticket.id} has no way back recorded: nothing of it is in the quarantine (none was possible, or it was purged or restored already)${file ? ` and its undo script ${file} cannot be read here` : ''}.`,
    'Look at `pg-agent quarantine list` and the ticket\'s impact ("way back") to see what was kept.',
  );
  if (!file) throw none;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined || text.startsWith(VOID_MARK)) throw none;
  const body = text
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .trim();
  if (body === '')
    throw new AgentError('BAD_INPUT', `Ticket ${ticket.id} changed no rows that an undo script could put back.`);
  return text;
}

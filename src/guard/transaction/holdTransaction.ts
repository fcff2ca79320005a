/**
 * A measured client transaction held on one ticket (rolled back already, so no lock of it is held while a person
 * decides): its statements with the values of its measured run, what of them varies on retry (varyingValues.ts,
 * shown on the card before the approval and covered by the ticket's hash), the rows per table it changed, and,
 * when it is an approved transaction's retry with other values, what differs from that one.
 */
import { transactionSql } from '../../core/approvals/ticket';
import type { GuardTransactionStatement, Ticket, TouchedRows } from '../../core/approvals/ticket';
import { writeProposal } from '../../core/approvals/proposalFiles';
import { classifySql } from '../../core/sql/classify';
import { analyzeImpact } from '../../core/sql/impact';
import { riskOfWrite } from '../../core/sql/risk';
import type { ChangedTable } from '../../core/sql/tableEffects';
import type { GuardContext } from '../guardContext';
import type { ErrorFields } from '../wire/backendMessages';
import type { RecordedStatement } from './transactionRecord';
import { templateKeyOf } from './transactionRecord';
import { heldTransaction } from './transactionTickets';
import { varyingLine } from './varyingValues';

export type CommitAnswer = { kind: 'committed' } | { kind: 'error'; fields: ErrorFields };

export interface HoldRequest {
  connection: string;
  writes: readonly RecordedStatement[];
  /** What of each statement varies on retry (markVarying), index by index; empty: nothing. */
  varies: readonly GuardTransactionStatement['varies'][];
  changed: ChangedTable[];
  /** Why an approved ticket of these templates did not cover it: its effects, or what differs ("what differs" lines). */
  exceeded: string[];
  differs: string[];
  approved: Ticket | undefined;
  ddlNotes: string[];
  heavyAt?: number;
  /** Row identity: the rows that existed before it the measured run touched (touchedRows.ts). */
  rows?: TouchedRows[];
}

export async function holdOnTicket(
  context: GuardContext,
  user: string,
  events: { held(ticketId: string): void } | undefined,
  request: HoldRequest,
): Promise<CommitAnswer> {
  const { connection, writes, changed, exceeded, differs, approved, ddlNotes, heavyAt } = request;
  const store = await context.openTicketStore();
  const db = await context.openDb();
  const body = transactionSql(writes);
  const classification = classifySql(body);
  const impact = await analyzeImpact(db, classification, context.settings);
  // The rows per table are what the client's own run changed (the preview replays recorded values, whose ids
  // may match nothing now): its rows and its risk are the measured run's, never below the preview's risk.
  impact.tables = changed.map((c) => ({
    schema: c.schema,
    name: c.name,
    via: 'direct',
    inserted: c.inserted,
    updated: c.updated,
    deleted: c.deleted,
  }));
  impact.exactRows = changed.reduce((sum, c) => sum + c.inserted + c.updated + c.deleted, 0);
  // The client's own run reached its COMMIT without an error. The preview replays the recorded values, ids the
  // server gave that run included (the row it inserted is gone since the rollback), so its failure (a foreign key
  // to that row) says nothing of the retry, whose values the approval binds by provenance.
  impact.wouldFail = null;
  impact.risk = riskOfWrite(
    {
      classification,
      rows: impact.exactRows,
      tables: changed.map((c) => `${c.schema}.${c.name}`),
      atLeast: impact.risk,
    },
    context.settings.policy,
  ).risk;
  impact.warnings.push(...ddlNotes);
  const statements = writes.map((s, i) => {
    const varies = request.varies[i] ?? [];
    return { sql: s.sql, template: s.template, read: s.read, ...(varies.length > 0 ? { varies } : {}) };
  });
  const varying = statements.flatMap((s, i) => (s.varies ?? []).map((v) => `Varies on retry: ${varyingLine(i, v)}.`));
  if (differs.length > 0 && approved)
    impact.warnings.push(...differs.map((line) => `Differs from approved ticket ${approved.id}: ${line}.`));
  impact.warnings.push(
    `A transaction through the guard: it commits only as the client's retry with these statements and these values${varying.length > 0 ? ' (but for the values below, which vary on retry)' : ''}, within these rows per table; sequence values its measured run took are gone.`,
    ...varying,
  );
  const effects = changed.map((c) => ({
    schema: c.schema,
    name: c.name,
    inserted: c.inserted,
    updated: c.updated,
    deleted: c.deleted,
  }));
  const createdBy = `guard user ${user}`;
  const ticket = await store.create({
    sql: body,
    origin: 'guardTransaction',
    transaction: { statements, effects, ...(request.rows?.length ? { rows: request.rows } : {}) },
    connection,
    impact,
    createdBy,
    matchKey: templateKeyOf(writes),
  });
  context.logger.info('guard held a transaction', {
    ticket: ticket.id,
    statements: writes.length,
    exceeded: [...exceeded, ...differs].join('; '),
  });
  // Shown in VS Code ("Waiting for you") as one card, like a held statement; approving there only decides it.
  await writeProposal(
    context.workspaceDir,
    ticket.id,
    body,
    createdBy,
    `one transaction sent through pg-agent guard (${statements.length} statement${statements.length === 1 ? '' : 's'}, in order, with the values of its measured run${heavyAt === undefined ? '' : `; statement ${heavyAt} heavy DDL, analysed, not run`})`,
    heavyAt === undefined
      ? "the client's retry through the guard commits it"
      : `the client's retry runs statements 1..${heavyAt}; it commits if it ends there, else it is held once more at COMMIT`,
  ).catch((error: unknown) =>
    context.logger.warn('could not write the proposal file of a held transaction', {
      ticket: ticket.id,
      error: String(error),
    }),
  );
  events?.held(ticket.id);
  const fields = heldTransaction(ticket, false, heavyAt);
  // The client's message names its effects beyond the approved ones first, else what differs (the card shows both).
  const why = exceeded.length > 0 ? exceeded : differs;
  if (why.length > 0 && approved)
    fields.message += `; the approved ticket ${approved.id} did not cover it (${why.join('; ')})`;
  return { kind: 'error', fields };
}

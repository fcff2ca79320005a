/**
 * Submits each recommended index through the one SQL path (runSql): a CREATE INDEX CONCURRENTLY is a held write
 * with its impact (SHARE UPDATE EXCLUSIVE, blocks nothing, cannot be rolled back, runs alone), never built here.
 */
import type { TicketStore } from '../../approvals/ticketStore';
import type { Db } from '../../db/db';
import type { Logger } from '../../platform/logger';
import type { SafetySettings } from '../../sql/safetySettings';
import { runSql } from '../../sql/runSql';
import type { SqlOutcome } from '../../sql/runSql';
import type { AdviceReport } from './adviceTypes';

export interface HoldRequest {
  connection: string;
  requestedBy: string;
  settings: SafetySettings;
  logger?: Logger;
}

/** The report with a ticket on each recommendation; the outcomes in the same order. */
export async function holdRecommendations(
  db: Db,
  store: TicketStore,
  report: AdviceReport,
  request: HoldRequest,
): Promise<{ report: AdviceReport; outcomes: SqlOutcome[] }> {
  const outcomes: SqlOutcome[] = [];
  const recommendations = [];
  for (const rec of report.recommendations) {
    // autoApprove stays off: an index the advisor proposed waits for a person like any agent's write.
    const outcome = await runSql(db, store, {
      sql: rec.sql,
      connection: request.connection,
      requestedBy: request.requestedBy,
      settings: request.settings,
      ...(request.logger ? { logger: request.logger } : {}),
    });
    outcomes.push(outcome);
    recommendations.push(
      outcome.status === 'held'
        ? { ...rec, ticket: { id: outcome.ticket.id, risk: outcome.impact.risk, status: outcome.ticket.status } }
        : rec,
    );
  }
  return { report: { ...report, recommendations }, outcomes };
}

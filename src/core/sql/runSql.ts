/**
 * The safety path every SQL goes through, whoever wrote it (a person, the CLI, the model):
 * parse and classify, then what the database's own code would do (reach) → a read runs read-only → anything else gets its impact and an approval ticket,
 * or is refused. Nothing here can approve: approvals come only from a person (SPEC §5.7).
 */
import { policyInForce, requiresPeople } from '../approvals/policyInForce';
import type { Ticket } from '../approvals/ticket';
import type { TicketStore } from '../approvals/ticketStore';
import type { Db } from '../db/db';
import { executionGuards } from '../approvals/signedMode';
import type { Classification } from './classification';
import { analyzeImpact } from './impact';
import type { ImpactReport, LintFindingView } from '../../shared/impactReport';
import type { CheckedSql } from './reach/checkSql';
import { checkedFor } from './reach/checkSql';
import { passwordNotice } from './secrets/hidePasswords';
import type { ReadResult } from './runRead';
import { pendingOrNewTicket } from './pendingTicket';
import { runRead } from './runRead';
import type { SafetySettings } from './safetySettings';
import type { ExecutionResult } from './approvedTicket';
import { executeApproved } from './executeApproved';
import { workspaceUndoSink } from './writeArtifacts';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';

export type SqlOutcome =
  | { status: 'executed'; classification: Classification; result: ReadResult }
  | { status: 'held'; classification: Classification; impact: ImpactReport; ticket: Ticket }
  | { status: 'refused'; classification: Classification }
  /** A write the policy let through without a person (approval.autoApproveMaxRisk), already executed. */
  | {
      status: 'written';
      classification: Classification;
      impact: ImpactReport;
      ticket: Ticket;
      execution: ExecutionResult;
    };

export interface RunSqlRequest {
  sql: string;
  /** Password-free key of the database (the ticket is bound to it). */
  connection: string;
  /** Who asked: a person's name, or "agent". */
  requestedBy: string;
  settings: SafetySettings;
  /**
   * Lets plain writes within `settings.policy.autoApproveMaxRisk` run without a person. Only for SQL a
   * person wrote and sent: the agent's writes always wait for a person (SPEC §5.7).
   */
  autoApprove?: boolean;
  /** Where an auto-approved write's undo script goes (`.pgagent/undo`); without it nothing is auto-approved. */
  undoDir?: string;
  logger?: Logger;
  /**
   * The check of exactly this `sql` on this database made just before (checkSqlParsed, e.g. by a validation
   * step), carried in memory: it is used instead of checking again. Anything else is checked now.
   */
  checked?: CheckedSql;
  /** Findings from context the SQL does not show (a job's earlier steps, issue 25): in the impact, and one risk level up. */
  contextLint?: LintFindingView[];
  /** The identical statement's pending ticket of the same requester is reused (pendingTicket.ts): CLI, MCP, VS Code, the guard. */
  reusePending?: boolean;
}

/** Throws AgentError for bad input (SQL_EMPTY, SQL_SYNTAX, SQL_PLACEHOLDERS, BAD_INPUT) and database failures. */
export async function runSql(db: Db, store: TicketStore, request: RunSqlRequest): Promise<SqlOutcome> {
  const checked = await checkedFor(db, request.sql, request.checked);
  const { classification } = checked;
  if (classification.decision === 'refuse') return { status: 'refused', classification };
  if (classification.decision === 'run') {
    const statement = classification.statements[0];
    if (statement) {
      const { settings } = request;
      const result = await runRead(db, statement, statement.kind === 'SelectStmt', settings);
      return { status: 'executed', classification, result };
    }
  }
  const impact = await analyzeImpact(
    db,
    classification,
    request.contextLint?.length ? { ...request.settings, contextLint: request.contextLint } : request.settings,
    checked,
  );
  if (checked.passwordsSet?.length) impact.warnings.unshift(passwordNotice(checked.passwordsSet));
  const input = { sql: checked.sql, connection: request.connection, impact, createdBy: request.requestedBy };
  const ticket = request.reusePending ? (await pendingOrNewTicket(store, input)).ticket : await store.create(input);
  // A team policy (signatures, two persons, roles) is about people: the auto-approval never satisfies it, so it holds.
  // Nor in signed mode (a policy pinned in the database): only a person's signature counts there, so it holds.
  // The policy in force for this database (wherever it is set: pinned, the person's own config, the workspace).
  const teamPolicy = async () =>
    request.settings.policySources
      ? requiresPeople(
          await db.withSession((session) =>
            policyInForce(session, request.connection, request.settings.policySources ?? {}),
          ),
        )
      : Object.keys(request.settings.approvalRules?.policy ?? {}).length > 0;
  if (
    request.autoApprove &&
    request.undoDir !== undefined &&
    !impact.requiresApproval &&
    impact.wouldFail === null &&
    !(await teamPolicy()) &&
    !(await pinsSignedPolicy(db))
  ) {
    const limit = request.settings.policy.autoApproveMaxRisk;
    // The ticket's history says who let it through: the policy, on behalf of the person who sent it.
    await store.decide(ticket.id, {
      approve: true,
      by: `policy (autoApproveMaxRisk=${limit})`,
      comment: `${impact.risk} is within approval.autoApproveMaxRisk=${limit}; sent by ${request.requestedBy}`,
    });
    const execution = await executeApproved(db, store, ticket.id, {
      ...request.settings,
      connection: request.connection,
      by: request.requestedBy,
      undo: workspaceUndoSink(request.undoDir, ticket.id),
      logger: request.logger ?? silentLogger,
    });
    return { status: 'written', classification, impact, ticket: execution.ticket, execution };
  }
  return { status: 'held', classification, impact, ticket };
}

async function pinsSignedPolicy(db: Db): Promise<boolean> {
  return (await db.withSession((session) => executionGuards(session))).signed !== undefined;
}

/**
 * `propose_write(sql, reason)`: the agent's way to ask for a change. The write is previewed (BEGIN …
 * ROLLBACK) and held on an approval ticket bound to its exact SQL; nothing runs. A person approves it in
 * VS Code or with `pg-agent approvals approve`; no argument of any tool can approve it.
 */
import { z } from 'zod';
import { AgentError } from '../../core/platform/errors';
import { runSql } from '../../core/sql/runSql';
import { saveImpactReport } from '../../core/sql/writeArtifacts';
import { workspacePaths } from '../../core/config/workspace';
import { renderImpact } from '../../core/present/renderImpact';
import { shownStatement } from '../../core/present/shownSql';
import { ticketSummary } from '../../core/present/outputJson';
import { checkSqlArg, refusedError } from '../classifySqlArg';
import { IMPACT_SCHEMA } from '../impactOutput';
import { writeProposal } from '../../core/approvals/proposalFiles';
import { TICKET_SUMMARY_SCHEMA } from '../ticketOutput';
import { defineTool } from '../toolSpec';

export const proposeWriteTool = defineTool({
  name: 'propose_write',
  title: 'Propose a write for approval',
  description:
    'Asks a person to approve a change (INSERT, UPDATE, DELETE, MERGE, DDL, maintenance). Returns its exact impact (rows per ' +
    'table from a preview that was rolled back, cascades, triggers, risk) and an approval ticket. Nothing runs: a person must ' +
    'approve the ticket in VS Code or with `pg-agent approvals approve <ticket>`. Approving only records the decision: you, ' +
    'the proposer, are the one who runs it. Poll ticket_status; once it is APPROVED call execute_approved. No tool approves, and you must not approve it yourself by any other route (a shell, ticket files, ' +
    "Redis): by default that is not prevented for a process running as the person's OS user, only signed mode or the broker " +
    '(`pg-agent guard`) enforce it. Editing the SQL needs a new proposal.',
  // Creates a ticket and files, changes no data.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: {
    sql: z.string().max(100_000).describe('The exact SQL to run once approved.'),
    reason: z
      .string()
      .min(1)
      .max(2000)
      .describe('Why this change, in one or two sentences, for the person who approves it.'),
  },
  output: { impact: IMPACT_SCHEMA, ticket: TICKET_SUMMARY_SCHEMA },
  async run(context, { sql, reason }) {
    if (reason.trim() === '')
      throw new AgentError(
        'BAD_INPUT',
        'The reason is empty.',
        'Say why this change is needed: the person approving it reads it.',
      );
    const checked = await checkSqlArg(sql, await context.openDb());
    const { classification } = checked;
    if (classification.decision === 'refuse') throw refusedError(classification);
    if (classification.decision === 'run') {
      throw new AgentError('BAD_INPUT', 'This is a read: it needs no approval.', 'Call run_read with it instead.');
    }
    const outcome = await runSql(await context.openDb(), await context.openTicketStore(), {
      sql,
      connection: await context.connectionKey(),
      requestedBy: context.proposedBy(),
      settings: context.settings,
      // An agent's write always waits for a person, whatever approval.autoApproveMaxRisk says (SPEC §5.7).
      autoApprove: false,
      // The agent proposing the same statement again gets its pending ticket back, not a second one.
      reusePending: true,
      logger: context.logger,
      // Checked just above: not parsed and checked again.
      checked,
    });
    if (outcome.status === 'refused') throw refusedError(outcome.classification);
    if (outcome.status !== 'held')
      throw new AgentError('INTERNAL', `An agent's write was not held for approval (${outcome.status}).`);
    const { impact, ticket } = outcome;
    await saveImpactReport(workspacePaths(context.workspaceDir).impact, ticket);
    await writeProposal(context.workspaceDir, ticket.id, ticket.sql, ticket.createdBy, reason);
    context.logger.info('write proposed over MCP', { ticket: ticket.id, risk: impact.risk, by: ticket.createdBy });
    // The statement as the person approving it will see it: hidden characters shown and flagged.
    const shown = shownStatement(ticket.sql);
    const text =
      `Proposed statement (as the person approving it sees it):\n${shown.text}\n\n` +
      (shown.hidden.length > 0
        ? 'It is flagged to the person: it holds hidden characters, and approving it takes an explicit confirmation.\n\n'
        : '') +
      `${renderImpact(impact)}\n\n` +
      `Held for approval: ticket ${ticket.id} (risk ${impact.risk}, expires ${ticket.expiresAt}). NOTHING HAS RUN.\n` +
      'A person must approve it: in VS Code (the CodeLens "Approve & run" above the SQL, or the Postgres Agent panel), ' +
      `or in a terminal with \`pg-agent approvals approve ${ticket.id}\`. No tool of yours can approve it; do not approve it yourself by any other route.\n` +
      'Approving only records the decision; VS Code and the terminal do not run it: you do, once it is approved.\n' +
      `Check ticket_status("${ticket.id}"): APPROVED → call execute_approved("${ticket.id}"); EXECUTED → someone ran it by hand ` +
      '(`pg-agent exec --ticket`), do not run it again; REJECTED or EXPIRED → it will not run.';
    return { structured: { impact, ticket: ticketSummary(ticket) }, text };
  },
});

/**
 * `pg-agent sql`: the safety path from a terminal. Reads run read-only; writes show their impact and,
 * on a terminal, ask for approval (y/N; HIGH and CRITICAL need "yes"); otherwise exit 3 with a ticket.
 */
import type { Ticket } from '../../core/approvals/ticket';
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { Db } from '../../core/db/db';
import { AgentError, toAgentError } from '../../core/platform/errors';
import type { Classification } from '../../core/sql/classification';
import { executeApproved } from '../../core/sql/executeApproved';
import type { ImpactReport } from '../../shared/impactReport';
import type { ReadResult } from '../../core/sql/runRead';
import { runSql } from '../../core/sql/runSql';
import { saveImpactReport, workspaceUndoSink } from '../../core/sql/writeArtifacts';
import type { SafetySettings } from '../../core/sql/safetySettings';
import { decideTicket } from '../../core/approvals/approvalPath';
import { deciderOf, requesterOf } from '../decider';
import { signingScopeFor } from '../signingScope';
import { workspacePaths } from '../../core/config/workspace';
import type { CliCommand, CommandContext } from '../command';
import { EXIT } from '../exitCodes';
import type { ExitCode } from '../exitCodes';
import { formatCount } from '../../core/present/format';
import { visibleText } from '../../shared/visibleSql';
import { promptApproval } from '../approvalPrompt';
import { shownStatement } from '../../core/present/shownSql';
import { caretAt, renderImpact, renderRows } from '../../core/present/renderImpact';
import { readSqlInput, cliPolicy, withPolicyWarnings } from '../sqlInput';
import { statementsJson, ticketSummary } from '../../core/present/outputJson';
import type { PolicyWarning } from '../../core/settings/workspacePolicy';

export const sqlCommand: CliCommand = {
  name: 'sql',
  summary: 'run SQL through the safety path: reads run read-only, writes wait for approval',
  usage: 'pg-agent sql [flags] [--] <SQL | ->',
  options: { by: { type: 'string' }, key: { type: 'string' } },
  optionsHelp: `  --by NAME           who asks (recorded on the ticket; default: the name of your only key, else $USER)
  --key NAME          sign your answer at the approval prompt with this key (default: your only key)`,
  description:
    'Reads (SELECT, VALUES, TABLE, SHOW, EXPLAIN) run in a READ ONLY transaction with a row cap.\n' +
    'Anything else is previewed in BEGIN … ROLLBACK, gets an approval ticket, and runs only after a person approves:\n' +
    'on a terminal you are asked; with --no-input (or no terminal) it exits 3 and prints the ticket for\n' +
    '`pg-agent approvals approve <id>` and `pg-agent exec --ticket <id>`.',
  async run(context) {
    const { args, io } = context;
    const sql = await readSqlInput(context);
    const db = await context.openDb();
    const store = await context.openTicketStore();
    const { settings, warnings } = await cliPolicy(context);
    const outcome = await runSql(db, store, {
      sql,
      connection: await context.connectionKey(),
      requestedBy: await requesterOf(context),
      settings,
      autoApprove: true,
      // The same statement again (a re-run demo, a retried script): its pending ticket, not a second one.
      reusePending: true,
      undoDir: workspacePaths(args.flags.workspace).undo,
      logger: context.logger,
    }).catch((error: unknown) => {
      throw withCaret(error, sql, args.flags.json, (text) => io.stderr(text));
    });
    switch (outcome.status) {
      case 'executed':
        return printRead(context, outcome.classification, outcome.result);
      case 'refused':
        if (args.flags.json)
          io.stdout(
            `${json({ status: 'refused', statements: statementsJson(outcome.classification), fields: [], rows: [], rowCount: 0, truncated: false, error: { code: 'SQL_REFUSED', message: outcome.classification.reasons.join('; ') } })}\n`,
          );
        else
          io.stderr(
            `Refused: ${visibleText(outcome.classification.reasons.join('; '))}.\nThis never runs through Postgres Agent.\n`,
          );
        return EXIT.refused;
      case 'written': {
        const undoFile = outcome.execution.undoFile;
        if (args.flags.json) {
          io.stdout(
            `${json({ status: 'executed', statements: statementsJson(outcome.classification), fields: [], rows: [], rowCount: outcome.execution.rows, truncated: false, impact: withPolicyWarnings(outcome.impact, warnings), ticket: ticketSummary(outcome.ticket) })}\n`,
          );
        } else {
          io.stdout(
            `${renderImpact(outcome.impact)}\n\nAuto-approved by policy (${outcome.impact.risk} is within approval.autoApproveMaxRisk): ${formatCount(outcome.execution.rows)} rows changed. Undo script: ${undoFile}\n`,
          );
        }
        return EXIT.ok;
      }
      case 'held':
        await saveImpactReport(workspacePaths(args.flags.workspace).impact, outcome.ticket);
        return holdOrAsk(
          context,
          db,
          store,
          outcome.classification,
          outcome.impact,
          outcome.ticket,
          settings,
          warnings,
        );
    }
  },
};

function printRead(context: CommandContext, classification: Classification, result: ReadResult): ExitCode {
  const { io, args } = context;
  if (args.flags.json) {
    io.stdout(
      `${json({ status: 'executed', statements: statementsJson(classification), fields: result.fields, rows: result.rows, rowCount: result.rowCount, truncated: result.truncated })}\n`,
    );
  } else {
    io.stdout(`${renderRows(result)}\n`);
  }
  return EXIT.ok;
}

async function holdOrAsk(
  context: CommandContext,
  db: Db,
  store: TicketStore,
  classification: Classification,
  impact: ImpactReport,
  ticket: Ticket,
  settings: SafetySettings,
  warnings: readonly PolicyWarning[],
): Promise<ExitCode> {
  const { io, args } = context;
  const canAsk = io.isTTY && !args.flags.noInput && !args.flags.json && io.prompt !== undefined;
  // The ticket's own SQL is what runs: that is what the person is shown, every hidden character visible.
  const shown = shownStatement(ticket.sql);
  if (!canAsk || !io.prompt) {
    if (args.flags.json) {
      io.stdout(
        `${json({ status: 'held', statements: statementsJson(classification), fields: [], rows: [], rowCount: 0, truncated: false, impact: withPolicyWarnings(impact, warnings), ticket: ticketSummary(ticket) })}\n`,
      );
    } else {
      io.stdout(
        `${shown.text}\n\n${renderImpact(impact)}\n\nHeld for approval: ticket ${ticket.id} (expires ${ticket.expiresAt}).\n`,
      );
      io.stdout(
        `  approve: pg-agent approvals approve ${ticket.id} --comment "…"\n  run:     pg-agent exec --ticket ${ticket.id}\n`,
      );
    }
    return EXIT.held;
  }
  io.stdout(`${shown.text}\n\n${renderImpact(impact)}\n\n`);
  const approved = await promptApproval(io.prompt, impact, shown.hidden);
  const { key } = await deciderOf(context);
  const scope = key ? await signingScopeFor(context, ticket) : undefined;
  const decided = await decideTicket(store, ticket.id, {
    approve: approved,
    ...(key ? { key } : { by: await requesterOf(context) }),
    ...(scope ? { scope } : {}),
    seenHash: ticket.sqlHash,
    comment: 'answered at the pg-agent prompt',
  });
  if (!approved) {
    io.stdout(`Rejected: nothing was run (ticket ${ticket.id}).\n`);
    return EXIT.refused;
  }
  const result = await executeApproved(db, store, ticket.id, {
    ...settings,
    connection: await context.connectionKey(),
    by: decided.decisions.at(-1)?.by ?? 'cli-user',
    undo: workspaceUndoSink(workspacePaths(args.flags.workspace).undo, ticket.id),
    logger: context.logger,
  });
  const undoFile = result.undoFile;
  io.stdout(
    `Executed: ${formatCount(result.rows)} rows changed in ${formatCount(result.elapsedMs)} ms. Undo script: ${undoFile}\n`,
  );
  return EXIT.ok;
}

/** A syntax error gets the input with a caret under PostgreSQL's position (on stderr). */
function withCaret(error: unknown, sql: string, jsonOutput: boolean, stderr: (text: string) => void): AgentError {
  const e = toAgentError(error);
  if (!jsonOutput && e.code === 'SQL_SYNTAX' && 'position' in e && typeof e.position === 'number') {
    stderr(`${caretAt(sql, e.position)}\n`);
  }
  return e instanceof AgentError ? e : new AgentError('INTERNAL', String(error));
}

function json(value: unknown): string {
  return JSON.stringify(value);
}

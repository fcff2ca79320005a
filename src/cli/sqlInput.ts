/** What the SQL commands share: reading the input, the safety settings from flags, ticket summaries. */
import type { Ticket } from '../core/approvals/ticket';
import { AgentError } from '../core/errors';
import type { Classification } from '../core/sql/classification';
import { checkSql } from '../core/sql/reach/checkSql';
import type { SafetySettings } from '../core/sql/safetySettings';
import { DEFAULT_SAFETY } from '../core/sql/safetySettings';
import type { CommonFlags } from './args';
import type { WorkspaceConfig } from '../core/workspace';
import { readWorkspaceConfig, workspacePaths } from '../core/workspace';
import { resolveSafety } from '../core/workspacePolicy';
import type { CommandContext } from './command';

/** The SQL text (positional or stdin); empty or NUL-containing input is bad input (exit 2). */
export async function readSqlInput(context: CommandContext): Promise<string> {
  return checkSqlText(await context.readText());
}

/** The same checks for SQL that arrives another way (an MCP tool's argument). */
export function checkSqlText(sql: string): string {
  if (sql.includes('\u0000')) {
    throw new AgentError('BAD_INPUT', 'The SQL contains a NUL byte, which PostgreSQL cannot take.', 'Remove it (binary data belongs in a bytea literal).');
  }
  if (sql.trim() === '') {
    throw new AgentError('SQL_EMPTY', 'No SQL given.', 'Pass it after the command (use -- if it starts with a dash) or - to read it from stdin.');
  }
  return sql;
}

/** The input, parsed, classified and checked against the database's own code (reach) on the command's database. */
export async function classifyInput(context: CommandContext): Promise<{ sql: string; classification: Classification }> {
  const sql = await readSqlInput(context);
  return { sql, classification: await checkSql(await context.openDb(), sql) };
}

/** Limits from the flags, under the workspace's policy from .pgagent/config.json (default: every write asks). */
export function safetySettings(flags: CommonFlags, config: WorkspaceConfig): SafetySettings {
  return resolveSafety(config, {
    ...DEFAULT_SAFETY,
    ...(flags.maxRows !== undefined ? { maxRows: flags.maxRows } : {}),
    ...(flags.timeoutMs !== undefined ? { statementTimeoutMs: flags.timeoutMs, previewTimeoutMs: flags.timeoutMs } : {}),
  });
}

/** The safety settings of this command: its flags under its workspace's policy. */
export async function cliSafety(context: CommandContext): Promise<SafetySettings> {
  return safetySettings(context.args.flags, await readWorkspaceConfig(workspacePaths(context.args.flags.workspace)));
}

/** SPEC §6 `statements` of the JSON output: each statement with its class and what happens to it. */
export function statementsJson(classification: Classification) {
  return classification.statements.map((s) => ({ sql: s.sql, kind: s.kind, class: s.class, decision: s.decision, reasons: s.reasons }));
}

export function ticketSummary(ticket: Ticket) {
  return {
    id: ticket.id,
    status: ticket.status,
    risk: ticket.risk,
    connection: ticket.connection,
    sqlHash: ticket.sqlHash,
    createdBy: ticket.createdBy,
    createdAt: ticket.createdAt,
    expiresAt: ticket.expiresAt,
  };
}


/** What the SQL commands share: reading the input, the safety settings from flags, ticket summaries. */
import type { Ticket } from '../core/approvals/ticket';
import { AgentError } from '../core/errors';
import type { Classification } from '../core/sql/classification';
import { classifySql } from '../core/sql/classify';
import { loadParser } from '../core/sql/parse';
import type { SafetySettings } from '../core/sql/safetySettings';
import { DEFAULT_SAFETY } from '../core/sql/safetySettings';
import type { CommonFlags } from './args';
import type { WorkspaceConfig } from '../core/workspace';
import { approvalRulesOf } from '../core/workspace';
import type { CommandContext } from './command';

/** The SQL text (positional or stdin); empty or NUL-containing input is bad input (exit 2). */
export async function readSqlInput(context: CommandContext): Promise<string> {
  const sql = await context.readText();
  if (sql.includes('\u0000')) {
    throw new AgentError('BAD_INPUT', 'The SQL contains a NUL byte, which PostgreSQL cannot take.', 'Remove it (binary data belongs in a bytea literal).');
  }
  if (sql.trim() === '') {
    throw new AgentError('SQL_EMPTY', 'No SQL given.', 'Pass it after the command (use -- if it starts with a dash) or - to read it from stdin.');
  }
  return sql;
}

/** The input, parsed and classified (the parser's WASM loaded on first use). */
export async function classifyInput(context: CommandContext): Promise<{ sql: string; classification: Classification }> {
  const sql = await readSqlInput(context);
  await loadParser();
  return { sql, classification: classifySql(sql) };
}

/** Limits from the flags, the approval policy from .pgagent/config.json (default: every write asks). */
export function safetySettings(flags: CommonFlags, config?: WorkspaceConfig): SafetySettings {
  return {
    ...DEFAULT_SAFETY,
    policy: {
      ...DEFAULT_SAFETY.policy,
      autoApproveMaxRisk: config?.approval?.autoApproveMaxRisk ?? DEFAULT_SAFETY.policy.autoApproveMaxRisk,
      criticalTables: config?.safety?.criticalTables ?? DEFAULT_SAFETY.policy.criticalTables,
    },
    ...(config && approvalRulesOf(config) ? { approvalRules: approvalRulesOf(config) } : {}),
    ...(flags.maxRows !== undefined ? { maxRows: flags.maxRows } : {}),
    ...(flags.timeoutMs !== undefined ? { statementTimeoutMs: flags.timeoutMs, previewTimeoutMs: flags.timeoutMs } : {}),
  };
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

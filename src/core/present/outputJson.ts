/**
 * JSON shapes of SPEC §6 that more than one surface prints: the CLI's --json output and the MCP tools'
 * structured results are the same objects, built here once.
 */
import type { SchemaContext } from '../ask/schemaContext';
import type { Ticket } from '../approvals/ticket';
import type { Classification } from '../sql/classification';

/** SPEC §6 `statements` of the JSON output: each statement with its class and what happens to it. */
export function statementsJson(classification: Classification) {
  return classification.statements.map((s) => ({
    sql: s.sql,
    kind: s.kind,
    class: s.class,
    decision: s.decision,
    reasons: s.reasons,
  }));
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

/** SPEC §6: exactly these keys, tables best first, scores to 3 decimals; a collapsed family adds `members`, the same table in several schemas `schemas` (the shown one first). */
export type ContextJson = {
  tables: { schema: string; name: string; score: number; columns: string[]; members?: string[]; schemas?: string[] }[];
  tokens: number;
  budget: number;
  schemaTokens: number;
};

export function contextJson(context: SchemaContext): ContextJson {
  return {
    tables: context.tables.map((t) => ({
      schema: t.schema,
      name: t.name,
      score: Math.round(t.score * 1000) / 1000,
      columns: t.columns,
      ...(t.members ? { members: t.members } : {}),
      ...(t.schemas ? { schemas: t.schemas } : {}),
    })),
    tokens: context.tokens,
    budget: context.budget,
    schemaTokens: context.schemaTokens,
  };
}

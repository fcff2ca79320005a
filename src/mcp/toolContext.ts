/**
 * What an MCP tool (or the same operation as a VS Code language-model tool) gets to work with: the
 * database, its password-free key, the ticket store, the schema, the limits and where the workspace is.
 * The CLI builds it from `pg-agent mcp`'s flags; the extension from its active connection.
 */
import type { TicketStore } from '../core/approvals/ticketStore';
import type { Db } from '../core/db/db';
import type { Logger } from '../core/platform/logger';
import type { SafetySettings } from '../core/sql/safetySettings';
import type { SchemaSnapshot } from '../shared/schema';
import type { SchemaContext, SchemaContextOptions } from '../core/ask/schemaContext';

export interface McpToolContext {
  openDb: () => Promise<Db>;
  /** Password-free key of the database (tickets are bound to it). */
  connectionKey: () => Promise<string>;
  openTicketStore: () => Promise<TicketStore>;
  loadSchema: () => Promise<SchemaSnapshot>;
  /**
   * One table as a snapshot of its own (none when there is no such table), read from the schema cache's index and
   * that table's bytes, not the whole schema (describe_table in a fresh process); optional.
   */
  loadTable?: (schema: string, name: string) => Promise<SchemaSnapshot>;
  /** The context of a question over the schema cache, its linking index stored (not rebuilt per call); optional. */
  loadContext?: (question: string, options: SchemaContextOptions) => Promise<SchemaContext>;
  settings: SafetySettings;
  /** Folder holding .pgagent/ (impact reports, undo scripts, proposals). */
  workspaceDir: string;
  /** Token budget of schema_context. */
  contextBudget: number;
  /** Who proposes writes: the agent, named by its MCP client ("agent via MCP (claude-code)"). */
  proposedBy: () => string;
  /** Who runs approved tickets: the person whose agent calls execute_approved. */
  executedBy: string;
  logger: Logger;
  /** `pg-agent mcp --guard`: the database is reached through the guard only (openDb is the guard), no ticket store. */
  guard?: GuardLink;
}

/** The statements this MCP server sent and the guard held, by ticket: execute_approved sends the identical text again. */
export type SentStatements = Map<string, string>;

/** The link to the guard: its URL (a guard user's password only, never the database's) and what was sent through it. */
export interface GuardLink {
  url: string;
  /** The guard's address without its password, as the agent and the person see it. */
  label: string;
  sent: SentStatements;
}

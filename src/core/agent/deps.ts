/** What the ask graph's nodes are given from outside: database, tickets, model, schema, settings. */
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type { TicketStore } from '../approvals/ticketStore';
import type { Db } from '../db/db';
import type { LlmProvider } from '../llm/provider';
import type { Logger } from '../logger';
import type { SafetySettings } from '../sql/safetySettings';
import type { SchemaSnapshot } from '../../shared/schema';
import type { AuditLog } from './audit';

export interface AskDeps {
  db: Db;
  /** Password-free key of the database (tickets are bound to it). */
  connectionKey: string;
  ticketStore: TicketStore;
  /** Undefined when no model is configured: intent falls back to a static guess, SQL cannot be written. */
  provider: LlmProvider | undefined;
  loadSnapshot: () => Promise<SchemaSnapshot>;
  settings: SafetySettings;
  logger: Logger;
  /** Who asked (recorded on tickets). */
  requestedBy: string;
  audit: AuditLog;
  /** Token budget of the schema context (default 6000). */
  contextBudgetTokens?: number;
  /** Time limit of one model call (default 60 s). */
  modelTimeoutMs?: number;
  /** Receives the summary while the model writes it (streamed), so a UI can show it growing. */
  onSummaryText?: (delta: string) => void;
}

/** The thread id of the run (the checkpoint key), for audit records and logs. */
export function threadIdOf(config: LangGraphRunnableConfig | undefined): string {
  const id: unknown = config?.configurable?.thread_id;
  return typeof id === 'string' ? id : 'unknown';
}

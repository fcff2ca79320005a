/** What every agent run (an ask, a job) is given from outside: the database, tickets, model, schema, safety settings. */
import type { TicketStore } from '../approvals/ticketStore';
import type { Db } from '../db/db';
import type { LlmProvider } from '../llm/provider';
import type { Logger } from '../platform/logger';
import type { SafetySettings } from '../sql/safetySettings';
import type { SchemaSnapshot } from '../../shared/schema';

export interface RunDeps {
  db: Db;
  /** Password-free key of the database (tickets are bound to it). */
  connectionKey: string;
  ticketStore: TicketStore;
  /** Undefined when no model is configured: what needs the model then fails with a clear error. */
  provider: LlmProvider | undefined;
  loadSnapshot: () => Promise<SchemaSnapshot>;
  settings: SafetySettings;
  logger: Logger;
  /** Who asked or started the job (recorded on the tickets the run creates). */
  requestedBy: string;
}

/** What the nodes of a job's phases graph are given from outside. */
import type { TicketStore } from '../../approvals/ticketStore';
import type { Db } from '../../db/db';
import type { LlmProvider } from '../../llm/provider';
import type { Logger } from '../../logger';
import type { SafetySettings } from '../../sql/safetySettings';
import type { SchemaSnapshot } from '../../../shared/schema';
import type { JobAuditEvent } from '../jobAudit';
import type { JobEvent } from '../jobOutcome';
import type { JobStore } from '../jobStore';
import type { PlanningSettings } from '../jobRunner';

export interface JobGraphDeps {
  store: JobStore;
  db: Db;
  connectionKey: string;
  ticketStore: TicketStore;
  provider: LlmProvider | undefined;
  loadSnapshot: () => Promise<SchemaSnapshot>;
  settings: SafetySettings;
  logger: Logger;
  requestedBy: string;
  planning: PlanningSettings;
  modelTimeoutMs: number;
  maxModelCallsPerPhase: number;
  audit: (jobId: string, event: JobAuditEvent) => Promise<void>;
  emit: (event: JobEvent) => void;
  signal: AbortSignal | undefined;
  now: () => Date;
}

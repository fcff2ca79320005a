/**
 * What a guard works with: the upstream it stands in front of (with the credentials only it holds), the
 * core's database handle for checks, previews and approved executions, the one ticket store, the safety
 * settings in force and where the workspace is. The CLI builds it from `pg-agent guard`'s flags.
 */
import type { TicketStore } from '../core/approvals/ticketStore';
import type { ServerTarget } from '../core/db/connectionTarget';
import type { Db } from '../core/db/db';
import type { Logger } from '../core/platform/logger';
import type { SafetySettings } from '../core/sql/safetySettings';

export interface GuardContext {
  /** The upstream database; each client session gets its own connection to it. */
  upstream: ServerTarget;
  /** The core's pool on the same database: classification (reach), previews, approved executions. */
  openDb: () => Promise<Db>;
  /** Password-free key of the upstream (tickets are bound to it). */
  connectionKey: () => Promise<string>;
  openTicketStore: () => Promise<TicketStore>;
  settings: SafetySettings;
  /** Folder holding .pgagent/ (undo scripts, the guard's users and status). */
  workspaceDir: string;
  /** Who runs approved statements, recorded on their tickets ("guard (alice)" adds the client's user). */
  executedBy: string;
  logger: Logger;
  /** `--hold wait[=SECONDS]`: a held statement outside a transaction keeps its client waiting this long for the decision. */
  holdWaitSeconds?: number;
  /** Records a read the guard passed on (query history); a push onto a queue, written later. */
  passedRead?: (sql: string, user: string) => void;
}

/**
 * What the host does with a message from a job's cockpit, without VS Code (unit-tested): parse it (the
 * panel protocol's schema, narrowed to the cockpit's job); log and ignore anything malformed, foreign or
 * about a write the cockpit does not show; else hand it to the one host path for it.
 */
import type { Logger } from '../../../core/platform/logger';
import { parseCockpitMessage } from '../../../shared/cockpitProtocol';
import type { JobIntent } from '../../../shared/panelMessages';
import { assertNever } from '../../../shared/protocol';
import { isJobIntent } from '../../../shared/panelMessages';

export interface CockpitRoutes {
  /** The cockpit is ready for its first snapshot. */
  ready(): void;
  /** The held write the cockpit shows (the only ticket it may decide), if any. */
  shownTicket(): string | undefined;
  job(intent: JobIntent): Promise<void>;
  decide(ticketId: string, approve: boolean): Promise<void>;
  openSql(ticketId: string): Promise<void>;
  openUndo(ticketId: string): Promise<void>;
  useSaferSql(ticketId: string, rule: string): Promise<void>;
}

export async function routeCockpitMessage(
  raw: unknown,
  jobId: string,
  routes: CockpitRoutes,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  const parsed = parseCockpitMessage(raw, jobId);
  if (!parsed.ok) {
    logger.warn('ignored a malformed cockpit message', { jobId, reason: parsed.reason });
    return;
  }
  const message = parsed.message;
  if (isJobIntent(message)) return routes.job(message);
  switch (message.type) {
    case 'ready':
      routes.ready();
      return;
    case 'decide':
    case 'openSql':
    case 'openUndo':
    case 'useSaferSql': {
      // Only the write this cockpit shows: its job's held write, decided through the one approval path.
      if (routes.shownTicket() !== message.ticketId) {
        logger.warn('ignored a cockpit message about a write it does not show', {
          jobId,
          type: message.type,
          ticketId: message.ticketId,
        });
        return;
      }
      if (message.type === 'decide') return routes.decide(message.ticketId, message.approve);
      if (message.type === 'openSql') return routes.openSql(message.ticketId);
      if (message.type === 'openUndo') return routes.openUndo(message.ticketId);
      return routes.useSaferSql(message.ticketId, message.rule);
    }
    default:
      return assertNever(message);
  }
}

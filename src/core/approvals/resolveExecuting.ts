/**
 * Exactly once under crashes (SPEC §5.6): a ticket read while EXECUTING is resolved from its transaction's
 * fate in the database, so every store tells what really happened to a write whose executor died.
 */
import type { Logger } from '../platform/logger';
import type { Ticket } from './ticket';
import type { TransitionResult } from './ticketRules';
import { resolveRule } from './ticketRules';
import type { ExecutionResolver } from './ticketStore';

/**
 * The ticket as it is: unchanged unless it is EXECUTING with a recorded transaction that has committed or
 * aborted, then EXECUTED or FAILED (stored). A database that cannot be asked leaves it EXECUTING.
 */
export async function resolveIfExecuting(
  ticket: Ticket,
  resolver: ExecutionResolver | undefined,
  transition: (rule: (t: Ticket) => TransitionResult) => Promise<Ticket>,
  logger: Logger,
): Promise<Ticket> {
  const execution = ticket.execution;
  if (ticket.status !== 'EXECUTING' || !execution || !resolver) return ticket;
  let status;
  try {
    status = await resolver.status(ticket);
  } catch (error) {
    logger.warn('could not read the transaction status of an executing ticket', {
      ticket: ticket.id,
      xid: execution.xid,
      error: String(error),
    });
    return ticket;
  }
  if (status !== 'committed' && status !== 'aborted') return ticket;
  const resolved = await transition(resolveRule(execution.xid, status));
  if (resolved.status !== 'EXECUTING') {
    logger.info('executing ticket resolved from pg_xact_status', {
      ticket: ticket.id,
      xid: execution.xid,
      status: resolved.status,
    });
    await resolver
      .resolved?.(resolved)
      .catch((error: unknown) =>
        logger.warn('could not finish resolving a ticket', { ticket: ticket.id, error: String(error) }),
      );
  }
  return resolved;
}

/** The guard's answer to a write outside a transaction: CommandComplete tags once it ran, or PA001/PA002/PA003. */
import type { Classification } from '../core/sql/classification';
import type { GuardContext } from './guardContext';
import { failedError, heldError, refusedError } from './heldMessages';
import type { AwaitingClients } from './heldStatement';
import { holdOrRun } from './heldStatement';
import { oneAtATime } from './keyedQueue';
import { commandComplete, errorResponse } from './wire/backendMessages';

export interface HeldEvents {
  /** A statement was held (or found still waiting) on this ticket. */
  held(ticketId: string): void;
  /** Shared by the guard's clients: tickets held for a client that has not been told of their run. */
  awaiting: AwaitingClients;
}

export async function holdOrRunAnswer(context: GuardContext, sql: string, classification: Classification, user: string, events: HeldEvents): Promise<Buffer[]> {
  try {
    const outcome = await oneAtATime(sql, () => holdOrRun(context, sql, classification, `guard user ${user}`, events.awaiting));
    if (outcome.kind === 'executed') return outcome.tags.map(commandComplete);
    if (outcome.kind === 'held') {
      events.held(outcome.ticket.id);
      return [errorResponse(heldError(outcome.ticket, outcome.reused))];
    }
    return [errorResponse(refusedError(outcome.message, outcome.hint))];
  } catch (error) {
    context.logger.warn('guard could not hold a statement', { error: String(error) });
    return [errorResponse(failedError(error))];
  }
}

/**
 * The guard's answer to a write outside a transaction: once it ran, what the server would have sent (its
 * RETURNING rows, as the executor got them, and CommandComplete), or PA001/PA002/PA003. With `--hold wait`
 * a held statement keeps its client waiting for the decision (core/approvals/waitForDecision.ts, through the
 * ticket store), then runs once or is refused; the statement was never sent upstream, so the wait holds no
 * upstream transaction or lock. The client's CancelRequest ends the wait with 57014 (the ticket stays
 * pending); a client gone ends it with no answer, and nothing runs for it.
 */
import type { Classification } from '../../core/sql/classification';
import type { CheckedSql } from '../../core/sql/reach/checkSql';
import type { GuardContext } from '../guardContext';
import type { Verdict } from '../judge/judge';
import { CANCELED, failedError, heldError, refusedError } from './heldMessages';
import type { AwaitingClients, HoldOutcome } from './heldStatement';
import { holdOrRun } from './heldStatement';
import { oneAtATime } from './keyedQueue';
import { commandComplete, errorResponse } from '../wire/backendMessages';
import { dataRow, rowDescription } from '../wire/rowMessages';

export interface HeldEvents {
  /** A statement was held (or found still waiting) on this ticket. */
  held(ticketId: string): void;
  /** `--hold wait`: the client now waits on this ticket (undefined: it no longer waits). */
  waiting?(ticketId: string | undefined): void;
  /** An approved ticket ran for this client's statement (metrics and log: metrics/guardEvents.ts). */
  executed?(ticketId: string): void;
  /** A statement was judged (metrics and log: what became of it). */
  judged?(kind: Verdict['kind'] | 'failed'): void;
  /** Shared by the guard's clients: tickets held for a client that has not been told of their run. */
  awaiting: AwaitingClients;
}

/** Why a wait ended before the decision: the client's CancelRequest, or the client is gone. */
export type WaitEnd = 'cancel' | 'gone';

export interface HoldAnswerOptions {
  /** Simple protocol: a RowDescription before the rows. Extended: none (the client had Describe for it). */
  rowDescription: boolean;
  /** `--hold wait`: how long a held statement keeps its client waiting; the signal's reason is a WaitEnd. */
  wait?: { seconds: number; signal: AbortSignal };
  /** The check of exactly this statement (its parse), carried to the impact and the approved run. */
  checked?: CheckedSql;
}

export async function holdOrRunAnswer(
  context: GuardContext,
  sql: string,
  classification: Classification,
  user: string,
  events: HeldEvents,
  options: HoldAnswerOptions,
): Promise<Buffer[]> {
  const requestedBy = `guard user ${user}`;
  try {
    // Identical statements are decided one at a time in this guard (one ticket, not one per client); never the wait.
    let outcome = await oneAtATime(sql, () =>
      holdOrRun(context, sql, classification, requestedBy, events.awaiting, options.checked),
    );
    if (outcome.kind === 'held' && options.wait) {
      const { ticket } = outcome;
      events.held(ticket.id);
      events.waiting?.(ticket.id);
      let ended: Awaited<ReturnType<typeof waitOn>>;
      try {
        ended = await waitOn(context, ticket.id, options.wait.seconds, options.wait.signal);
      } finally {
        events.waiting?.(undefined);
      }
      context.logger.info('guard wait on a held statement ended', { ticket: ticket.id, by: requestedBy, end: ended });
      if (ended === 'gone') return [];
      if (ended === 'cancel')
        return [
          errorResponse({
            ...CANCELED,
            detail: `Ticket ${ticket.id} stays pending; nothing ran. Once approved, the identical statement sent again runs once.`,
          }),
        ];
      if (ended === 'timeout') return [errorResponse(heldError(ticket, true, options.wait.seconds))];
      // A cancel or departure that came with the decision still wins: nothing runs for a client that left.
      if (options.wait.signal.aborted)
        return options.wait.signal.reason === 'gone'
          ? []
          : [
              errorResponse({
                ...CANCELED,
                detail: `Ticket ${ticket.id} was decided as the wait was cancelled; nothing ran.`,
              }),
            ];
      // Decided: the same path as a retry (approved: runs once; rejected: PA002; run elsewhere: its tag).
      outcome = await oneAtATime(sql, () =>
        holdOrRun(context, sql, classification, requestedBy, events.awaiting, options.checked),
      );
    }
    return answerOf(outcome, events, options);
  } catch (error) {
    context.logger.warn('guard could not hold a statement', { error: String(error) });
    return [errorResponse(failedError(error))];
  }
}

function answerOf(outcome: HoldOutcome, events: HeldEvents, options: HoldAnswerOptions): Buffer[] {
  if (outcome.kind === 'executed') {
    events.executed?.(outcome.ticket.id);
    return outcome.tags.flatMap((tag, index) => {
      const result = outcome.results?.[index];
      if (!result || result.fields.length === 0) return [commandComplete(tag)];
      return [
        ...(options.rowDescription ? [rowDescription(result.fields)] : []),
        ...result.rows.map(dataRow),
        commandComplete(tag),
      ];
    });
  }
  if (outcome.kind === 'held') {
    events.held(outcome.ticket.id);
    return [errorResponse(heldError(outcome.ticket, outcome.reused))];
  }
  return [errorResponse(refusedError(outcome.message, outcome.hint))];
}

/**
 * A client session's held statements: each one's answer, and with `--hold wait` the one wait in progress,
 * which the client's CancelRequest or departure ends.
 */
export class HeldRuns {
  private waitEnd: AbortController | undefined;

  constructor(
    private readonly context: GuardContext,
    private readonly user: string,
    private readonly events: HeldEvents,
  ) {}

  async answer(
    sql: string,
    classification: Classification,
    rowDescription: boolean,
    checked?: CheckedSql,
  ): Promise<Buffer[]> {
    const seconds = this.context.holdWaitSeconds;
    const waitEnd = (this.waitEnd = seconds === undefined ? undefined : new AbortController());
    try {
      const wait = seconds !== undefined && waitEnd ? { seconds, signal: waitEnd.signal } : undefined;
      return await holdOrRunAnswer(this.context, sql, classification, this.user, this.events, {
        rowDescription,
        ...(wait ? { wait } : {}),
        ...(checked ? { checked } : {}),
      });
    } finally {
      this.waitEnd = undefined;
    }
  }

  /** A CancelRequest: true when it ended a held statement's work or wait (there is nothing to cancel upstream). */
  cancel(): boolean {
    this.waitEnd?.abort('cancel' satisfies WaitEnd);
    return this.waitEnd !== undefined;
  }

  /** The client is gone: a wait ends, and nothing runs for it. */
  end(): void {
    this.waitEnd?.abort('gone' satisfies WaitEnd);
  }
}

/** Waits for the ticket's decision, at most `seconds`; the client's cancel or departure ends it sooner. */
async function waitOn(
  context: GuardContext,
  ticketId: string,
  seconds: number,
  signal: AbortSignal,
): Promise<'decided' | 'timeout' | WaitEnd> {
  const store = await context.openTicketStore();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort('timeout'), seconds * 1000);
  const forward = () => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  try {
    await store.waitForDecision(ticketId, controller.signal);
    return 'decided';
  } catch (error) {
    if (controller.signal.aborted) return controller.signal.reason as 'timeout' | WaitEnd;
    throw error;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', forward);
  }
}

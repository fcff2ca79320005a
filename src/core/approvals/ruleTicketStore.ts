/**
 * What both ticket stores (files, Redis) do the same way on top of their one primitive, `transition` (read
 * the ticket, apply a rule of ticketRules.ts, write it back only if nobody changed it meanwhile): decide,
 * claim, note the undo script, finish, release, resolve a ticket left EXECUTING, and wait for a decision.
 */
import type { Logger } from '../platform/logger';
import type { Ticket } from './ticket';
import type { TransitionResult } from './ticketRules';
import { claimRule, decideRule, finishRule, noteUndoRule, releaseRule } from './ticketRules';
import { resolveIfExecuting } from './resolveExecuting';
import type { ClaimRequest, ExecutionOutcome, ExecutionResolver, TicketDecisionRequest } from './ticketStore';
import { assertTicketId } from './ticketStore';
import { waitForDecision } from './waitForDecision';

export type TicketRule = (ticket: Ticket) => TransitionResult;

export abstract class RuleTicketStore {
  protected abstract readonly logger: Logger;
  /** Slow re-read while waiting for a decision, in case a change notification is missed. */
  protected abstract readonly pollMs: number;
  /** Where the tickets are, for messages (a folder, a Redis URL without its password). */
  protected abstract readonly where: string;
  protected readonly closing = new AbortController();
  private resolver: ExecutionResolver | undefined;

  abstract get(id: string, now?: Date): Promise<Ticket | undefined>;

  /** Applies `rule` to the stored ticket atomically; throws the rule's error after storing what it changed. */
  protected abstract transition(id: string, rule: TicketRule): Promise<Ticket>;

  /** Calls `onChange` when the ticket may have changed; resolves to the function that stops watching. */
  protected abstract watchTicket(id: string, onChange: () => void): Promise<() => void>;

  /** A public operation's transition (a store may wrap it, e.g. to name itself in connection errors). */
  protected applyRule(id: string, rule: TicketRule): Promise<Ticket> {
    return this.transition(id, rule);
  }

  async decide(id: string, decision: TicketDecisionRequest): Promise<Ticket> {
    assertTicketId(id);
    const ticket = await this.applyRule(id, decideRule(decision));
    this.logger.info(`approval ticket ${ticket.status.toLowerCase()}`, { ticket: id, by: decision.by });
    return ticket;
  }

  async claim(id: string, request: ClaimRequest): Promise<Ticket> {
    assertTicketId(id);
    const ticket = await this.applyRule(id, claimRule(request));
    this.logger.info('approval ticket claimed', { ticket: id, xid: request.xid });
    return ticket;
  }

  async noteUndo(id: string, xid: string, undoFile: string): Promise<Ticket> {
    assertTicketId(id);
    return this.applyRule(id, noteUndoRule(xid, undoFile));
  }

  async finish(id: string, outcome: ExecutionOutcome): Promise<Ticket> {
    assertTicketId(id);
    return this.applyRule(id, finishRule(outcome));
  }

  async release(id: string, outcome: ExecutionOutcome & { xid: string }): Promise<Ticket> {
    assertTicketId(id);
    return this.applyRule(id, releaseRule(outcome));
  }

  setResolver(resolver: ExecutionResolver | undefined): void {
    this.resolver = resolver;
  }

  /** A ticket left EXECUTING, resolved from the database when a resolver is set (see resolveExecuting.ts). */
  protected resolve(ticket: Ticket): Promise<Ticket> {
    return resolveIfExecuting(ticket, this.resolver, (rule) => this.transition(ticket.id, rule), this.logger);
  }

  async waitForDecision(id: string, signal?: AbortSignal): Promise<Ticket> {
    assertTicketId(id);
    const signals = signal ? [signal, this.closing.signal] : [this.closing.signal];
    return waitForDecision(
      id,
      {
        get: (ticketId) => this.get(ticketId),
        watch: (ticketId, onChange) => this.watchTicket(ticketId, onChange),
        pollMs: this.pollMs,
        where: this.where,
        onCheckFailed: (error) => this.logger.warn('re-reading a ticket failed', { ticket: id, error: String(error) }),
      },
      AbortSignal.any(signals),
    );
  }
}

/**
 * Who runs a held write once it is approved: one executor per write, whoever approved it and wherever. An outside
 * agent's proposal (MCP, VS Code chat): only the agent that proposed it, with execute_approved; a guard client's
 * statement: that client's own retry through the guard; an ask run's or a job's write: its owner (the run resumes
 * with it); a person's own write: wherever they run it (`pg-agent exec`, the window that held it).
 * Used by VS Code (what approving runs) and by the CLI (`exec` refuses another executor's ticket, `approve` says
 * who runs it). Plain data.
 */
import type { Ticket } from './ticket';
import { isGuardTransaction } from './ticket';

export type Executor = 'its agent' | 'its owner' | 'this window';

export function executorOf(write: { owner?: object; proposedBy?: string }): Executor {
  if (write.proposedBy !== undefined) return 'its agent';
  return write.owner ? 'its owner' : 'this window';
}

/** Whether approving here also runs it here (or through its owner in this window): false for an agent's proposal. */
export function runsInThisWindow(write: { owner?: object; proposedBy?: string }): boolean {
  return executorOf(write) !== 'its agent';
}

/** The requester names the guard and the MCP server give the tickets they create. */
const GUARD_REQUESTER = 'guard user ';
const AGENT_REQUESTERS = ['agent via MCP', 'agent in VS Code chat'];

/** Who runs a stored ticket once approved, read from its origin and requester. */
export type TicketRunner =
  { kind: 'anyone' } | { kind: 'guard client'; who: string; transaction: boolean } | { kind: 'agent'; who: string };

export function ticketRunner(ticket: Pick<Ticket, 'origin' | 'createdBy'>): TicketRunner {
  if (isGuardTransaction(ticket) || ticket.createdBy.startsWith(GUARD_REQUESTER))
    return { kind: 'guard client', who: ticket.createdBy, transaction: isGuardTransaction(ticket) };
  if (AGENT_REQUESTERS.some((prefix) => ticket.createdBy.startsWith(prefix)))
    return { kind: 'agent', who: ticket.createdBy };
  return { kind: 'anyone' };
}

/** What to do once the ticket is approved, as a person reads it after `approve`. */
export function nextStepAfterApproval(ticket: Pick<Ticket, 'id' | 'origin' | 'createdBy'>): string {
  const runner = ticketRunner(ticket);
  switch (runner.kind) {
    case 'guard client':
      return `It runs through the guard: retry the statement from the client (or wait: it runs when the client sends it again). Requested by ${runner.who}.`;
    case 'agent':
      return `The agent runs it with execute_approved (${runner.who}).`;
    case 'anyone':
      return `Run it with: pg-agent exec --ticket ${ticket.id}`;
  }
}

/**
 * Why `exec` must not run this ticket, or undefined when it may. `force` lets the ticket's own requester (the
 * name it was created by, e.g. the guard user) run it here instead; a guard transaction never runs outside the
 * client's retry (its recorded values would be replayed).
 */
export function execRefusal(
  ticket: Pick<Ticket, 'id' | 'origin' | 'createdBy'>,
  caller: string,
  force: boolean,
): { message: string; advice: string } | undefined {
  const runner = ticketRunner(ticket);
  if (runner.kind === 'anyone') return undefined;
  const owner = runner.kind === 'guard client' ? runner.who.slice(GUARD_REQUESTER.length) : runner.who;
  const ownsIt = caller === owner;
  if (force && ownsIt && !(runner.kind === 'guard client' && runner.transaction)) return undefined;
  const advice =
    runner.kind === 'guard client'
      ? 'Retry the statement from the client (or wait: it runs when the client sends it again).'
      : 'The agent runs it with execute_approved.';
  const forceNote =
    runner.kind === 'guard client' && runner.transaction
      ? ' A client transaction only commits through its own retry.'
      : force
        ? ` --force is only for its requester ("${owner}"), not "${caller}".`
        : ` Its requester ("${owner}") may run it here with --force.`;
  const what =
    runner.kind === 'guard client' && runner.transaction
      ? `holds a client transaction through pg-agent guard: it is committed by the guard client that asked for it (${runner.who}), not by pg-agent exec`
      : `is run by ${runner.kind === 'guard client' ? 'the guard client' : 'the agent'} that asked for it (${runner.who}), not by pg-agent exec`;
  return {
    message: `Ticket ${ticket.id} ${what}.${forceNote}`,
    advice,
  };
}

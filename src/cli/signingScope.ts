/**
 * Signed mode from a terminal (SPEC §5 3a): the scope a signature binds (the identity and pinned policy version of
 * the ticket's database) and the pinned rules a ticket is shown against, read from that database when this command
 * reaches it (--db, or the environment). The embedded sample database has no signed mode and is never opened here
 * (a window may hold it).
 */
import type { ApprovalRules } from '../core/approvals/approvalPolicy';
import type { DecisionScope, Ticket } from '../core/approvals/ticket';
import { decisionScope, executionGuards } from '../core/approvals/signedMode';
import type { Db } from '../core/db/db';
import type { CommandContext } from './command';

async function ticketDatabase(context: CommandContext, ticket: Ticket): Promise<Db | undefined> {
  if (ticket.connection.startsWith('sample:') || ticket.connection !== (await context.connectionKey()))
    return undefined;
  return context.openDb();
}

export async function signingScopeFor(context: CommandContext, ticket: Ticket): Promise<DecisionScope | undefined> {
  const db = await ticketDatabase(context, ticket);
  return db?.withSession((session) => decisionScope(session));
}

/** The pinned rules, for showing which decisions count; undefined when none is pinned or it cannot be read now. */
export async function pinnedRulesFor(context: CommandContext, ticket: Ticket): Promise<ApprovalRules | undefined> {
  try {
    const db = await ticketDatabase(context, ticket);
    const guards = await db?.withSession((session) => executionGuards(session));
    return guards?.signed?.pinned.rules;
  } catch (error) {
    context.logger.debug('could not read the pinned policy to show a ticket', {
      ticket: ticket.id,
      error: String(error),
    });
    return undefined;
  }
}

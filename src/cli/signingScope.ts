/**
 * The scope a terminal's signature binds (signed mode, SPEC §5 3a): the identity and pinned policy version of
 * the ticket's database, read from it when this command reaches that database (--db, or the environment).
 */
import type { DecisionScope, Ticket } from '../core/approvals/ticket';
import { decisionScope } from '../core/approvals/signedMode';
import type { CommandContext } from './command';

export async function signingScopeFor(context: CommandContext, ticket: Ticket): Promise<DecisionScope | undefined> {
  if (ticket.connection !== (await context.connectionKey())) return undefined;
  const db = await context.openDb();
  return db.withSession((session) => decisionScope(session));
}

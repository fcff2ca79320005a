/** `ticket_status(ticket_id)`: where a proposed write stands, as `pg-agent approvals show <id> --json`. */
import { z } from 'zod';
import type { Ticket } from '../../core/approvals/ticket';
import { AgentError } from '../../core/platform/errors';
import { shownStatement } from '../../core/present/shownSql';
import { TICKET_OUTPUT } from '../ticketOutput';
import { defineTool, READ_HINTS } from '../toolSpec';

const NEXT: Record<Ticket['status'], string> = {
  PENDING_APPROVAL:
    'Waiting for a person to approve or reject it (VS Code, or `pg-agent approvals approve`). Ask them; do not run anything else in its place.',
  APPROVED: 'Approved: call execute_approved with this ticket to run it, once.',
  REJECTED: 'Rejected: it will not run. Ask the person why before proposing anything else.',
  EXPIRED: 'Expired before anyone approved it: it will not run. Propose it again if it is still needed.',
  EXECUTING: 'Being executed right now.',
  EXECUTED: 'Executed: it ran once and cannot run again.',
  FAILED: 'Executed and failed, rolled back: nothing changed. See the history for the error.',
};

export const ticketStatusTool = defineTool({
  name: 'ticket_status',
  title: 'Status of an approval ticket',
  description:
    'The status of a ticket from propose_write (PENDING_APPROVAL, APPROVED, REJECTED, EXPIRED, EXECUTING, EXECUTED, FAILED), ' +
    "its SQL, impact and history (who decided, when, with what comment). A decision's name is what was recorded: by default " +
    "any process running as the person's OS user can record one; only a verified signature (signed mode) shows a person " +
    'decided.',
  annotations: { ...READ_HINTS, idempotentHint: false },
  input: { ticket_id: z.string().max(100).describe('The ticket id, tkt_… as returned by propose_write.') },
  output: TICKET_OUTPUT,
  async run(context, { ticket_id: id }) {
    const ticket = await (await context.openTicketStore()).get(id);
    if (!ticket)
      throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${id}.`, 'Use the ticket id propose_write returned.');
    const history = ticket.history
      .map((h) => `  ${h.at} ${h.action} by ${h.by}${h.comment ? `: ${h.comment}` : ''}`)
      .join('\n');
    // The statement as a person sees it (hidden characters shown and flagged); `structured.sql` stays exact.
    const statement =
      ticket.kind === 'plan' ? `Plan: ${ticket.plan?.title ?? ''}` : `SQL:\n${shownStatement(ticket.sql).text}`;
    return {
      structured: { ...ticket },
      text: `Ticket ${ticket.id}: ${ticket.status}. ${NEXT[ticket.status]}\n${statement}\nHistory:\n${history}`,
    };
  },
});

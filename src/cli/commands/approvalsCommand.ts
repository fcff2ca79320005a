/**
 * `pg-agent approvals list | show <id> | approve <id> | reject <id>`: the ticket workflow from a terminal;
 * with a shared Redis (REDIS_URL) a teammate approves from another machine.
 */
import { AgentError } from '../../core/errors';
import type { TicketStatus } from '../../core/approvals/ticket';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { columns, formatCount } from '../format';
import { renderImpact } from '../renderImpact';

const STATUSES: readonly TicketStatus[] = ['PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'EXPIRED', 'EXECUTING', 'EXECUTED', 'FAILED'];

export const approvalsCommand: CliCommand = {
  name: 'approvals',
  summary: 'list, show, approve or reject approval tickets',
  usage: 'pg-agent approvals list [--status S] | show <id> | approve <id> [--comment TEXT] | reject <id> [--comment TEXT]',
  options: {
    status: { type: 'string' },
    comment: { type: 'string' },
    by: { type: 'string' },
  },
  optionsHelp: `  --status S          list only tickets with this status (${STATUSES.join(', ')})
  --comment TEXT      recorded with the decision
  --by NAME           who decides (default: $USER)`,
  async run(context) {
    const { args, io } = context;
    const [action, id, ...extra] = args.positionals;
    const store = await context.openTicketStore();
    const by = typeof args.options.by === 'string' ? args.options.by : (io.env.USER ?? 'cli-user');
    const comment = typeof args.options.comment === 'string' ? args.options.comment : undefined;
    if (extra.length > 0) throw new AgentError('BAD_INPUT', `Unexpected arguments: ${extra.join(' ')}.`, 'One ticket id per call.');
    switch (action) {
      case 'list':
      case undefined: {
        const status = args.options.status;
        if (typeof status === 'string' && !STATUSES.includes(status as TicketStatus)) {
          throw new AgentError('BAD_INPUT', `Unknown status "${status}".`, `Use one of ${STATUSES.join(', ')}.`);
        }
        const tickets = await store.list(typeof status === 'string' ? { status: [status as TicketStatus] } : undefined);
        if (args.flags.json) {
          io.stdout(`${JSON.stringify(tickets, null, 2)}\n`);
        } else if (tickets.length === 0) {
          io.stdout('No tickets.\n');
        } else {
          io.stdout(`${columns(tickets.map((t) => [t.id, t.status, t.risk, `${formatCount(t.impact.exactRows ?? 0)} rows`, t.createdAt, oneLine(t.sql)]))}\n`);
        }
        return EXIT.ok;
      }
      case 'show':
      case 'approve':
      case 'reject': {
        if (!id) throw new AgentError('BAD_INPUT', `approvals ${action} needs a ticket id.`, 'List them with `pg-agent approvals list`.');
        const ticket =
          action === 'show'
            ? await store.get(id)
            : await store.decide(id, { approve: action === 'approve', by, ...(comment !== undefined ? { comment } : {}) });
        if (!ticket) throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${id}.`, 'List them with `pg-agent approvals list`.');
        if (args.flags.json) {
          io.stdout(`${JSON.stringify(ticket, null, 2)}\n`);
        } else {
          io.stdout(`${ticket.id} · ${ticket.status} · ${ticket.connection}\n\n${ticket.sql}\n\n${renderImpact(ticket.impact)}\n\n`);
          for (const h of ticket.history) io.stdout(`  ${h.at}  ${h.action} by ${h.by}${h.comment ? `: ${h.comment}` : ''}\n`);
          if (action === 'approve') io.stdout(`\nRun it with: pg-agent exec --ticket ${ticket.id}\n`);
        }
        return EXIT.ok;
      }
      default:
        throw new AgentError('BAD_INPUT', `Unknown approvals action "${action}".`, 'Use list, show, approve or reject.');
    }
  },
};

function oneLine(sql: string): string {
  const line = sql.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

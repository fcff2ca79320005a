/**
 * `pg-agent approvals list | show <id> | approve <id> | reject <id>`: the ticket workflow from a terminal
 * (write and plan tickets); with a shared Redis (REDIS_URL) a teammate decides from another machine.
 * Decisions are signed with the caller's key when they have one (`pg-agent keys new`).
 */
import { decideTicket } from '../../core/approvals/approvalPath';
import { missingApprovals } from '../../core/approvals/approvalPolicy';
import type { TicketStatus } from '../../core/approvals/ticket';
import { AgentError } from '../../core/platform/errors';
import { approvalRulesOf, readWorkspaceConfig, workspacePaths } from '../../core/config/workspace';
import type { CliCommand } from '../command';
import { deciderOf } from '../decider';
import { pinnedRulesFor, signingScopeFor } from '../signingScope';
import { EXIT } from '../exitCodes';
import { visibleText } from '../../shared/visibleSql';
import { guardApprovals } from '../guardApprovals';
import { printTicket, ticketJson } from '../ticketReport';
import { ticketTable } from '../ticketTable';
import { nextStepAfterApproval } from '../../core/approvals/executorRule';

const STATUSES: readonly TicketStatus[] = [
  'PENDING_APPROVAL',
  'APPROVED',
  'REJECTED',
  'EXPIRED',
  'EXECUTING',
  'EXECUTED',
  'FAILED',
];

export const approvalsCommand: CliCommand = {
  name: 'approvals',
  summary: 'list, show, approve or reject approval tickets (writes and plans)',
  usage:
    'pg-agent approvals list [--status S | --all] | show <id> | approve <id> [--comment TEXT] [--key NAME] | reject <id> [--comment TEXT]   (each with [--guard URL])',
  options: {
    status: { type: 'string' },
    all: { type: 'boolean' },
    comment: { type: 'string' },
    by: { type: 'string' },
    key: { type: 'string' },
    hash: { type: 'string' },
    guard: { type: 'string' },
  },
  optionsHelp: `  --status S          list only tickets with this status (${STATUSES.join(', ')}; default PENDING_APPROVAL)
  --all               list every ticket, whatever its status
  --comment TEXT      recorded with the decision (for a plan: reject = request changes, the comment is the feedback)
  --by NAME           who decides (default: your key's name, else $USER); with a key it must be the key's name
  --key NAME          sign with this key (default: your only key in $XDG_CONFIG_HOME/pg-agent/keys)
  --hash SHA256       decide only if the ticket is for this exact SQL or plan (what you looked at)
  --guard URL         ask a pg-agent guard (a broker) for its tickets over its own connection (a guard user's URL);
                      approve/reject then sign with your enrolled key and need a signed policy on its database`,
  description:
    "A second person's approve on an APPROVED ticket adds their decision (two-person rules). `show` and `list`\n" +
    "resolve a ticket left EXECUTING by a crash from its database (--db, or the ticket's connection with PGPASSWORD).",
  async run(context) {
    const { args, io } = context;
    const [action, id, ...extra] = args.positionals;
    if (extra.length > 0)
      throw new AgentError('BAD_INPUT', `Unexpected arguments: ${extra.join(' ')}.`, 'One ticket id per call.');
    const status = args.options.status;
    if (typeof status === 'string' && !STATUSES.includes(status as TicketStatus)) {
      throw new AgentError('BAD_INPUT', `Unknown status "${status}".`, `Use one of ${STATUSES.join(', ')}.`);
    }
    if (typeof args.options.guard === 'string')
      return guardApprovals(
        context,
        args.options.guard,
        action,
        id,
        typeof status === 'string' ? [status as TicketStatus] : undefined,
      );
    const store = await context.openTicketStore();
    const comment = typeof args.options.comment === 'string' ? args.options.comment : undefined;
    const seenHash = typeof args.options.hash === 'string' ? args.options.hash : undefined;
    const rules = approvalRulesOf(await readWorkspaceConfig(workspacePaths(args.flags.workspace)));
    switch (action) {
      case 'list':
      case undefined: {
        // Pending by default: what waits for a decision; --status picks one status, --all shows every ticket.
        const statuses: TicketStatus[] | undefined =
          typeof status === 'string'
            ? [status as TicketStatus]
            : args.options.all === true
              ? undefined
              : ['PENDING_APPROVAL'];
        const tickets = await store.list(statuses ? { status: statuses } : undefined);
        if (args.flags.json) {
          io.stdout(
            `${JSON.stringify(
              tickets.map((t) => ticketJson(t, rules)),
              null,
              2,
            )}\n`,
          );
        } else if (tickets.length === 0) {
          io.stdout(
            statuses?.length === 1 && statuses[0] === 'PENDING_APPROVAL' && status === undefined
              ? 'No tickets wait for a decision (pg-agent approvals list --all shows every ticket).\n'
              : 'No tickets.\n',
          );
        } else {
          io.stdout(`${visibleText(ticketTable(tickets, new Date()))}\n`);
        }
        return EXIT.ok;
      }
      case 'show':
      case 'approve':
      case 'reject': {
        if (!id)
          throw new AgentError(
            'BAD_INPUT',
            `approvals ${action} needs a ticket id.`,
            'List them with `pg-agent approvals list`.',
          );
        const found = await store.get(id);
        if (!found)
          throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${id}.`, 'List them with `pg-agent approvals list`.');
        let ticket = found;
        if (action !== 'show') {
          const decider = await deciderOf(context);
          // With a key, the signature also binds the database's identity and pinned policy version (signed mode).
          const scope = decider.key ? await signingScopeFor(context, found) : undefined;
          ticket = await decideTicket(store, id, {
            approve: action === 'approve',
            ...decider,
            ...(scope ? { scope } : {}),
            ...(comment !== undefined ? { comment } : {}),
            ...(seenHash !== undefined ? { seenHash } : {}),
          });
        }
        // On a database that pins a signed policy, its approvers say which signatures count (not the workspace's).
        const shownRules = (await pinnedRulesFor(context, ticket)) ?? rules;
        if (args.flags.json) {
          io.stdout(`${JSON.stringify(ticketJson(ticket, shownRules), null, 2)}\n`);
          return EXIT.ok;
        }
        printTicket(io, ticket, shownRules);
        const missing = ticket.status === 'APPROVED' && shownRules ? missingApprovals(ticket, shownRules) : [];
        if (missing.length > 0) io.stdout(`\nNot runnable yet: it needs ${missing.join('; and ')}.\n`);
        else if (action === 'approve' && ticket.kind === 'write' && ticket.status === 'APPROVED')
          io.stdout(`\n${nextStepAfterApproval(ticket)}\n`);
        else if (action !== 'show' && ticket.kind === 'plan')
          io.stdout(
            `\nThe job moves on when its window or \`pg-agent job continue ${ticket.plan?.jobId ?? ''}\` sees the decision.\n`,
          );
        return EXIT.ok;
      }
      default:
        throw new AgentError(
          'BAD_INPUT',
          `Unknown approvals action "${action}".`,
          'Use list, show, approve or reject.',
        );
    }
  },
};

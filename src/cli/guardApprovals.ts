/**
 * `pg-agent approvals … --guard URL` (docs/guard-broker.md §3): a person with only a guard URL and their enrolled
 * key reads and decides a ticket held by a broker they cannot read. The CLI talks to the guard as a guard client
 * (src/guard/brokerCommands.ts), checks the ticket's content against its hash and the pinned policy against the
 * admin's signature itself, signs the decision locally (passphrase on the controlling terminal) and sends it; the
 * guard verifies it as its executor does. Nothing here reads a workspace or the database.
 */
import pg from 'pg';
import type { Ticket, TicketStatus } from '../core/approvals/ticket';
import type { BrokerTicketView } from '../core/approvals/wireDecision';
import {
  checkViewedTicket,
  requireSignedPolicy,
  signWireDecision,
  verifiedBrokerPolicy,
} from '../core/approvals/wireDecision';
import type { ApprovalRules } from '../core/approvals/approvalPolicy';
import { keyFingerprint, verifyPolicy } from '../core/approvals/policyDocument';
import { AgentError } from '../core/platform/errors';
import { columns, formatCount } from '../core/present/format';
import { visibleText } from '../shared/visibleSql';
import type { CommandContext } from './command';
import { deciderOf } from './decider';
import type { ExitCode } from './exitCodes';
import { EXIT } from './exitCodes';
import { oneLine, printTicket, ticketJson } from './ticketReport';

/** A string constant as PostgreSQL's grammar reads it with standard_conforming_strings on (the guard's parser). */
const quoted = (text: string): string => `'${text.replace(/'/g, "''")}'`;

async function guardQuery(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url, application_name: 'pg-agent approvals' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new AgentError(
      'DB_CONNECT_FAILED',
      `Could not reach the guard at --guard: ${String((error as Error).message)}`,
      'Check the guard URL (user and password of a guard user: pg-agent guard users add).',
    );
  }
  try {
    // No parameters: the simple query protocol, the only one the guard answers its own commands in.
    const result = await client.query<Record<string, unknown>>(sql);
    return result.rows.map((r) => Object.values(r)[0]);
  } catch (error) {
    const e = error as pg.DatabaseError;
    const code =
      e.code === 'PA002'
        ? 'APPROVAL_POLICY'
        : e.code === '42704'
          ? 'APPROVAL_NOT_FOUND'
          : e.code === '22023'
            ? 'BAD_INPUT'
            : 'DB_QUERY_FAILED';
    throw new AgentError(code, `The guard says: ${e.message}`, e.hint);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function view(url: string, id: string): Promise<BrokerTicketView> {
  const [row] = await guardQuery(url, `SELECT * FROM pg_agent.ticket(${quoted(id)})`);
  if (!row || typeof row !== 'object') throw new AgentError('APPROVAL_NOT_FOUND', `The guard has no ticket ${id}.`);
  const answered = row as BrokerTicketView;
  checkViewedTicket(answered, id);
  return answered;
}

export async function guardApprovals(
  context: CommandContext,
  url: string,
  action: string | undefined,
  id: string | undefined,
  statuses: TicketStatus[] | undefined,
): Promise<ExitCode> {
  const { args, io } = context;
  if (action === 'list' || action === undefined) {
    const tickets = (await guardQuery(url, 'SELECT * FROM pg_agent.tickets()')) as Ticket[];
    const shown = statuses ? tickets.filter((t) => statuses.includes(t.status)) : tickets;
    if (args.flags.json)
      io.stdout(
        `${JSON.stringify(
          shown.map((t) => ticketJson(t, undefined)),
          null,
          2,
        )}\n`,
      );
    else if (shown.length === 0) io.stdout('No tickets.\n');
    else
      io.stdout(
        `${visibleText(columns(shown.map((t) => [t.id, t.kind, t.status, t.risk, `${formatCount(t.impact.exactRows ?? 0)} rows`, t.createdAt, oneLine(t)])))}\n`,
      );
    return EXIT.ok;
  }
  if (action !== 'show' && action !== 'approve' && action !== 'reject')
    throw new AgentError('BAD_INPUT', `Unknown approvals action "${action}".`, 'Use list, show, approve or reject.');
  if (!id)
    throw new AgentError(
      'BAD_INPUT',
      `approvals ${action} needs a ticket id.`,
      'List them with `pg-agent approvals list --guard URL`.',
    );
  let shown = await view(url, id);
  if (action !== 'show') {
    requireSignedPolicy(shown);
    const decider = await deciderOf(context);
    if (!decider.key) {
      throw new AgentError(
        'APPROVAL_POLICY',
        'Over --guard a decision must be signed with your enrolled key: none was found in your config.',
        'Make one with `pg-agent keys new --name YOU` and have the admin enrol it (pg-agent policy enroll).',
      );
    }
    const seenHash = args.options.hash;
    if (typeof seenHash === 'string' && seenHash !== shown.ticket.sqlHash) {
      throw new AgentError(
        'APPROVAL_SQL_MISMATCH',
        `Ticket ${id} is not for the hash you gave (--hash): it changed since you looked.`,
        'Show it again and decide on what is there now.',
      );
    }
    // Checked before the signature: the admin's signature over the policy, for the database the guard names, enrolling this key.
    const document = verifiedBrokerPolicy(shown, decider.key);
    const comment = typeof args.options.comment === 'string' ? args.options.comment : undefined;
    const decision = signWireDecision(shown, document, decider.key, action === 'approve', new Date(), comment);
    const [row] = await guardQuery(url, `SELECT pg_agent.decide(${quoted(JSON.stringify(decision))})`);
    shown = row as BrokerTicketView;
  }
  const rules = policyRules(shown);
  if (args.flags.json) {
    io.stdout(
      `${JSON.stringify({ ...ticketJson(shown.ticket, rules), database: shown.database, policyVersion: shown.policy?.version ?? null }, null, 2)}\n`,
    );
    return EXIT.ok;
  }
  printTicket(io, shown.ticket, rules);
  io.stdout(
    shown.policy
      ? `\nDatabase ${shown.database} · signed policy version ${shown.policy.version} by the admin key ${keyFingerprint(shown.policy.adminKey)}\n`
      : `\nDatabase ${shown.database} · default mode (no signed policy): approve as the broker's user on its host.\n`,
  );
  if (action === 'approve')
    io.stdout('\nThe client sends the identical statement (or transaction) again through the guard: it runs once.\n');
  return EXIT.ok;
}

/** The pinned rules, verified against the admin's signature here (display: the guard and its executor decide). */
function policyRules(shown: BrokerTicketView): ApprovalRules | undefined {
  if (!shown.policy) return undefined;
  const document = verifyPolicy(shown.policy, shown.policy.adminKey, shown.database);
  return { approvers: document.approvers, policy: { ...document.policy, requireSignature: true } };
}

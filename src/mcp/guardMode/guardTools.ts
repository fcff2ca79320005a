/**
 * The tools of `pg-agent mcp --guard URL` that differ from the ones with a database (SPEC §5 8, the broker): this
 * server holds no ticket store, so a proposal is the statement sent to the guard (held there, on the guard's
 * ticket, with the guard's impact preview), execute_approved sends the identical statement again (the guard runs
 * it once, when a person approved it), and ticket_status says what this server saw and that the guard holds the
 * rest. The names and inputs are the same tools'; the outputs keep the shape where there is something to put in it.
 */
import { z } from 'zod';
import { AgentError } from '../../core/platform/errors';
import { checkSqlArg, refusedError } from '../classifySqlArg';
import type { McpToolContext } from '../toolContext';
import type { McpTool } from '../toolSpec';
import { defineTool, READ_HINTS } from '../toolSpec';
import { executeApprovedTool } from '../tools/executeApproved';
import { impactTool } from '../tools/impact';
import { proposeWriteTool } from '../tools/proposeWrite';
import { ticketStatusTool } from '../tools/ticketStatus';
import type { GuardLink } from '../toolContext';
import type { GuardWords } from './guardStatement';
import { sendThroughGuard } from './guardStatement';

const WORDS = z.looseObject({ message: z.string(), detail: z.string().optional(), hint: z.string().optional() });
const HELD_TICKET = z.looseObject({ id: z.string(), status: z.string(), risk: z.string(), heldBy: z.string() });

function linkOf(context: McpToolContext): GuardLink {
  if (!context.guard) throw new AgentError('INTERNAL', 'A guard tool ran without a guard.');
  return context.guard;
}

function guardText(words: GuardWords): string {
  return [`The guard: ${words.message}`, words.detail ?? '', words.hint ? `(${words.hint})` : '']
    .filter(Boolean)
    .join('\n');
}

const proposeThroughGuard = defineTool({
  name: proposeWriteTool.name,
  title: proposeWriteTool.title,
  description:
    'Asks a person to approve a change: the statement is sent to pg-agent guard (the broker this server reaches the ' +
    'database through; it holds the credentials and the tickets), which previews it and holds it on an approval ticket. ' +
    "Nothing runs until a person approves it (`pg-agent approvals approve <ticket>` where the guard's tickets are). " +
    'Then call execute_approved: the guard runs the identical statement once. If a person already approved this ' +
    'identical statement, the guard runs it now, once, and this tool says so.',
  annotations: proposeWriteTool.annotations,
  input: {
    sql: z.string().max(100_000).describe('The exact SQL to run once approved.'),
    reason: z
      .string()
      .min(1)
      .max(2000)
      .describe("Why this change, in one or two sentences (kept in this server's log: the guard shows the statement)."),
  },
  output: {
    status: z.enum(['held', 'executed']),
    ticket: HELD_TICKET.optional(),
    rows: z.number().optional(),
    guard: WORDS.optional(),
  },
  async run(context, { sql, reason }) {
    if (reason.trim() === '')
      throw new AgentError(
        'BAD_INPUT',
        'The reason is empty.',
        'Say why this change is needed: the person approving it reads it.',
      );
    const link = linkOf(context);
    const { classification } = await checkSqlArg(sql, await context.openDb());
    if (classification.decision === 'refuse') throw refusedError(classification);
    if (classification.decision === 'run')
      throw new AgentError('BAD_INPUT', 'This is a read: it needs no approval.', 'Call run_read with it instead.');
    const answer = await sendThroughGuard(link, sql);
    if (answer.kind === 'ran') {
      context.logger.info('a proposed write was already approved: the guard ran it', { rows: answer.rows });
      return {
        structured: { status: 'executed', rows: answer.rows },
        text: `A person had already approved this identical statement: the guard ran it now, once (${answer.command}, ${answer.rows} rows). Do not send it again.`,
      };
    }
    link.sent.set(answer.ticket, sql);
    context.logger.info('write proposed through the guard', { ticket: answer.ticket, risk: answer.risk, reason });
    const ticket = {
      id: answer.ticket,
      status: 'PENDING_APPROVAL',
      risk: answer.risk,
      heldBy: `pg-agent guard at ${link.label}`,
    };
    return {
      structured: { status: 'held', ticket, guard: answer.words },
      text:
        `${guardText(answer.words)}\n\nHeld for approval by the guard: ticket ${answer.ticket} (risk ${answer.risk}). NOTHING HAS RUN.\n` +
        `A person approves it where the guard keeps its tickets (\`pg-agent approvals approve ${answer.ticket}\` with the guard's workspace or ticket store). ` +
        'No tool of yours can approve it, and this server holds no ticket store or database credential to do it with.\n' +
        `Once the person says it is approved, call execute_approved("${answer.ticket}"): the guard runs the identical statement once.`,
    };
  },
});

const statusThroughGuard = defineTool({
  name: ticketStatusTool.name,
  title: ticketStatusTool.title,
  description:
    'What this server knows of a ticket it got from the guard (pg-agent guard holds the tickets and their decisions, ' +
    'this server does not): the statement it sent and what the guard answered. To learn whether it is approved, ask ' +
    'the person, or call execute_approved: the guard runs it once if approved, or answers that it still waits.',
  annotations: { ...READ_HINTS, idempotentHint: false },
  input: { ticket_id: z.string().max(100).describe('The ticket id, tkt_… as returned by propose_write.') },
  output: { id: z.string(), status: z.literal('HELD_BY_GUARD'), sql: z.string(), heldBy: z.string() },
  run(context, { ticket_id: id }) {
    const link = linkOf(context);
    const sql = link.sent.get(id);
    if (sql === undefined)
      throw new AgentError(
        'APPROVAL_NOT_FOUND',
        `This server sent no statement the guard held on ${id}.`,
        'Use the ticket id propose_write returned in this session; after a restart, propose the same SQL again: the guard answers with its ticket.',
      );
    return Promise.resolve({
      structured: { id, status: 'HELD_BY_GUARD', sql, heldBy: `pg-agent guard at ${link.label}` },
      text: `Ticket ${id} is held by the guard at ${link.label}, which keeps its status and decisions; this server has no ticket store. Ask the person whether it is approved; then call execute_approved("${id}").`,
    });
  },
});

const executeThroughGuard = defineTool({
  name: executeApprovedTool.name,
  title: executeApprovedTool.title,
  description:
    'Sends the identical statement of a ticket you got from propose_write to the guard again: the guard runs it once if a ' +
    'person approved it (re-checked, within the approved rows, under the policy in force there), or answers that it still ' +
    'waits, was rejected, or is used up. Returns the rows changed.',
  annotations: executeApprovedTool.annotations,
  input: { ticket_id: z.string().max(100).describe('A ticket id (tkt_…) propose_write returned.') },
  output: {
    status: z.literal('executed'),
    ticket: z.string(),
    rows: z.number(),
    tables: z.array(z.looseObject({})),
    undoFile: z.string(),
    elapsedMs: z.number(),
  },
  async run(context, { ticket_id: id }) {
    const link = linkOf(context);
    const sql = link.sent.get(id);
    if (sql === undefined)
      throw new AgentError(
        'APPROVAL_NOT_FOUND',
        `This server sent no statement the guard held on ${id}.`,
        'Use the ticket id propose_write returned in this session; after a restart, propose the same SQL again.',
      );
    const started = performance.now();
    const answer = await sendThroughGuard(link, sql);
    if (answer.kind === 'held') {
      link.sent.set(answer.ticket, sql);
      if (answer.ticket === id)
        throw new AgentError(
          'APPROVAL_NOT_APPROVED',
          `Ticket ${id} is still waiting for a person; nothing ran.`,
          'Ask the person to approve it where the guard keeps its tickets, then call execute_approved again.',
        );
      throw new AgentError(
        'APPROVAL_NOT_APPROVED',
        `Ticket ${id} can no longer run (used, expired or gone); the guard held the statement again on ticket ${answer.ticket}. Nothing ran.`,
        `A person approves ${answer.ticket} if it is still wanted.`,
      );
    }
    link.sent.delete(id);
    const elapsedMs = Math.round(performance.now() - started);
    return {
      structured: { status: 'executed', ticket: id, rows: answer.rows, tables: [], undoFile: '', elapsedMs },
      text: `The guard ran ticket ${id}: ${answer.command}, ${answer.rows} rows. The ticket is used up. Its undo script is kept by the guard, in its own workspace.`,
    };
  },
});

const impactThroughGuard = defineTool({
  name: impactTool.name,
  title: impactTool.title,
  description:
    "Through the guard, the impact preview is the guard's: call propose_write, whose held answer carries the risk and rows per table the guard previewed. This tool runs nothing.",
  annotations: READ_HINTS,
  input: { sql: z.string().max(100_000).describe('The write to analyse.') },
  output: {},
  run() {
    return Promise.reject(
      new AgentError(
        'BAD_INPUT',
        'This server reaches the database through pg-agent guard, which previews writes itself when it holds them.',
        "Call propose_write: its answer carries the guard's risk and rows per table, and nothing runs until a person approves.",
      ),
    );
  },
});

const REPLACED = new Map<string, McpTool>(
  [proposeThroughGuard, statusThroughGuard, executeThroughGuard, impactThroughGuard].map((t) => [t.name, t]),
);

/** The tool list of `pg-agent mcp --guard`: the same names in the same order, the four above in place of theirs. */
export function guardModeTools(tools: readonly McpTool[]): McpTool[] {
  return tools.map((t) => REPLACED.get(t.name) ?? t);
}

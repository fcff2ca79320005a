/**
 * The guard's own commands (docs/guard-broker.md §3): how a person with only a guard URL and their enrolled key
 * reads and decides a ticket held by a broker they cannot read. Three simple queries, recognised only when the
 * whole message is exactly one of them by PostgreSQL's grammar (parse tree compared, locations and the string
 * argument aside), answered here and never sent upstream:
 *   SELECT * FROM pg_agent.tickets()             the tickets waiting or approved (one JSON row each)
 *   SELECT * FROM pg_agent.ticket('tkt_…')       one ticket, the database identity and the pinned signed policy
 *   SELECT pg_agent.decide('{signed decision}')  records a decision the broker verifies as its executor does
 * Anything else (a second statement, a CTE, a cast, the extended protocol, inside a transaction) is not one of
 * them and is judged like any SQL.
 */
import type { Db } from '../core/db/db';
import { databaseIdentity } from '../core/db/databaseIdentity';
import { SCHEMA_PRESENCE_SQL } from '../core/approvals/pgagentSchema';
import { executionGuards } from '../core/approvals/signedMode';
import type { Ticket } from '../core/approvals/ticket';
import type { BrokerTicketView, RawPinnedPolicy } from '../core/approvals/wireDecision';
import { parseWireDecision, wireDecisionProblem } from '../core/approvals/wireDecision';
import { AgentError, toAgentError } from '../core/platform/errors';
import { loadParser, parseSql } from '../core/sql/parse';
import type { GuardContext } from './guardContext';
import type { GuardRole } from './guardUsers';
import { refusedError } from './hold/heldMessages';
import { GUARD_SQLSTATE } from './sqlstates';
import { commandComplete, errorResponse } from './wire/backendMessages';
import { dataRow, rowDescription } from './wire/rowMessages';

type BrokerCommand = { kind: 'tickets' } | { kind: 'ticket'; id: string } | { kind: 'decide'; decision: string };

const TEMPLATES: [BrokerCommand['kind'], string][] = [
  ['tickets', 'SELECT * FROM pg_agent.tickets()'],
  ['ticket', "SELECT * FROM pg_agent.ticket('?')"],
  ['decide', "SELECT pg_agent.decide('?')"],
];
let shapes: Map<string, BrokerCommand['kind']> | undefined;

/** The tree without locations, string constants replaced by "?" (collected in order). */
function shapeOf(tree: unknown, strings: string[]): unknown {
  if (Array.isArray(tree)) return tree.map((t) => shapeOf(t, strings));
  if (tree === null || typeof tree !== 'object') return tree;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(tree)) {
    if (key === 'location') continue;
    if (key === 'A_Const' && value && typeof value === 'object' && 'sval' in value) {
      strings.push(String((value as { sval: { sval?: string } }).sval.sval ?? ''));
      out[key] = { sval: '?' };
      continue;
    }
    out[key] = shapeOf(value, strings);
  }
  return out;
}

function shapeKey(sql: string): { key: string; strings: string[] } | undefined {
  const statements = parseSql(sql).statements;
  if (statements.length !== 1) return undefined;
  const strings: string[] = [];
  return { key: JSON.stringify(shapeOf(statements[0]!.tree, strings)), strings };
}

/** A cheap look first: every guard command names the pg_agent schema (a spelling that hides it is simply not one). */
export function mayBeBrokerCommand(sql: string): boolean {
  return /pg_agent/i.test(sql);
}

/** The guard command this whole simple-query message is, or undefined (then it is judged like any SQL). */
export async function brokerCommandOf(sql: string): Promise<BrokerCommand | undefined> {
  if (!mayBeBrokerCommand(sql)) return undefined;
  await loadParser();
  if (!shapes) shapes = new Map(TEMPLATES.map(([kind, text]) => [shapeKey(text)!.key, kind]));
  let shape;
  try {
    shape = shapeKey(sql);
  } catch {
    return undefined;
  }
  const kind = shape ? shapes.get(shape.key) : undefined;
  if (!kind || !shape) return undefined;
  if (kind === 'tickets') return shape.strings.length === 0 ? { kind } : undefined;
  if (shape.strings.length !== 1) return undefined;
  return kind === 'ticket' ? { kind, id: shape.strings[0]! } : { kind, decision: shape.strings[0]! };
}

/** The guard user asking: a client sees only the tickets its own statements opened, an approver every one. */
export interface Asker {
  user: string;
  role: GuardRole;
}

/** The guard's answer (rows and tag, or an ErrorResponse), without ReadyForQuery. */
export async function answerBrokerCommand(
  context: GuardContext,
  command: BrokerCommand,
  asker: Asker,
): Promise<Buffer> {
  try {
    const rows = await run(context, command, asker);
    const name = command.kind === 'decide' ? 'decide' : 'ticket';
    return Buffer.concat([
      rowDescription([{ name, dataTypeID: 114 }]),
      ...rows.map((r) => dataRow([JSON.stringify(r)])),
      commandComplete(`SELECT ${rows.length}`),
    ]);
  } catch (error) {
    const e = toAgentError(error);
    context.logger.info('guard command refused', { command: command.kind, code: e.code, message: e.message });
    // PostgreSQL's own codes for "no such object" and "bad argument"; every other refusal is the guard's PA002.
    if (e.code === 'APPROVAL_NOT_FOUND')
      return errorResponse({ code: '42704', message: e.message, ...(e.advice ? { hint: e.advice } : {}) });
    if (e.code === 'BAD_INPUT')
      return errorResponse({ code: '22023', message: e.message, ...(e.advice ? { hint: e.advice } : {}) });
    if (e.code.startsWith('APPROVAL_'))
      return errorResponse(refusedError(`refused by the guard: ${e.message}`, e.advice));
    return errorResponse({ code: GUARD_SQLSTATE.failed, message: `the guard could not answer: ${e.message}` });
  }
}

async function run(context: GuardContext, command: BrokerCommand, asker: Asker): Promise<unknown[]> {
  const store = await context.openTicketStore();
  const connection = await context.connectionKey();
  // Another user's ticket is answered as one that does not exist (its statement and values are that user's).
  const ours = (t: Ticket | undefined): t is Ticket =>
    t !== undefined &&
    t.connection === connection &&
    (asker.role === 'approver' || t.createdBy === `guard user ${asker.user}`);
  switch (command.kind) {
    case 'tickets':
      return (await store.list({ status: ['PENDING_APPROVAL', 'APPROVED'] })).filter(ours);
    case 'ticket': {
      const ticket = await store.get(command.id);
      if (!ours(ticket))
        throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${command.id} for this guard's database.`);
      return [await viewOf(await context.openDb(), ticket)];
    }
    case 'decide': {
      const decision = parseWireDecision(command.decision);
      const db = await context.openDb();
      const guards = await executionGuards(db);
      if (!guards.signed) {
        throw new AgentError(
          'APPROVAL_POLICY',
          "this database pins no signed policy (default mode): a decision over the guard's connection is not accepted, since any guard client could send one.",
          `Approve as the broker's user on its host: sudo -u pgagent pg-agent-broker approvals approve ${decision.ticket}`,
        );
      }
      const ticket = await store.get(decision.ticket);
      if (!ours(ticket))
        throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${decision.ticket} for this guard's database.`);
      const problem = wireDecisionProblem(ticket, decision, guards.signed, new Date());
      if (problem) throw new AgentError('APPROVAL_POLICY', `the decision on ${ticket.id} is not recorded: ${problem}.`);
      const decided = await store.decide(ticket.id, {
        approve: decision.approve,
        by: decision.by,
        ...(decision.comment !== undefined ? { comment: decision.comment } : {}),
        seenHash: decision.hash,
        now: new Date(decision.at),
        signature: decision.signature,
      });
      context.logger.info('signed decision recorded over the guard connection', {
        ticket: ticket.id,
        by: decision.by,
        approve: decision.approve,
      });
      return [await viewOf(db, decided)];
    }
  }
}

/** The ticket with what the person's signature binds, read by the guard from its upstream. */
async function viewOf(db: Db, ticket: Ticket): Promise<BrokerTicketView> {
  const identity = await databaseIdentity(db);
  return { ticket, database: identity.key, policy: await rawPinnedPolicy(db) };
}

async function rawPinnedPolicy(db: Db): Promise<RawPinnedPolicy | null> {
  const presence = await db.query<{ pinned: boolean }>(SCHEMA_PRESENCE_SQL);
  if (!presence.rows[0]?.pinned) return null;
  const rows = await db.query<{ admin_key: string; version: number; document: string; signature: string }>(
    'SELECT pin.admin_key, p.version, p.document, p.signature FROM pgagent.policy_pin pin JOIN pgagent.policy p ON p.version = pin.version',
  );
  const row = rows.rows[0];
  if (!row || rows.rows.length !== 1)
    throw new AgentError(
      'APPROVAL_POLICY',
      'this database has the pgagent schema of signed mode, but its pin or pinned policy is missing.',
    );
  return { adminKey: row.admin_key, version: Number(row.version), document: row.document, signature: row.signature };
}

/**
 * `pg-agent mcp --guard URL` (issue 24 item 3, the broker): the MCP server holds no database credential and no
 * ticket store; every statement goes to `pg-agent guard` as a guard client, which judges it as it judges psql's.
 * This file sends one statement outside a transaction and reads the guard's answer: it ran (a read, or an
 * identical statement a person approved: the guard ran it once), it is held on a ticket (PA001: the ticket id,
 * risk and reuse read from the guard's typed fields, shared/guardAnswers.ts; the rows per table in the detail, the
 * approve command in the hint), or it is refused.
 */
import pg from 'pg';
import { AgentError } from '../../core/platform/errors';
import type { GuardLink } from '../toolContext';
import { GUARD_SQLSTATE } from '../../guard/sqlstates';
import type { Risk } from '../../shared/impactReport';
import { detailForPeople, readGuardFields } from '../../shared/guardAnswers';

/** What the guard said, in its own words (message, detail, hint) where it said something. */
export interface GuardWords {
  message: string;
  detail?: string;
  hint?: string;
}

export type GuardAnswer =
  | { kind: 'ran'; rows: number; command: string }
  | { kind: 'held'; ticket: string; risk: Risk; reused: boolean; words: GuardWords };

/**
 * Sends `sql` as one simple query outside a transaction, on a connection of its own (so nothing else shares its
 * session); a held statement comes back as `held`, a refusal throws SQL_REFUSED, any other error as the guard sent it.
 */
export async function sendThroughGuard(link: Pick<GuardLink, 'url' | 'label'>, sql: string): Promise<GuardAnswer> {
  const client = new pg.Client({ connectionString: link.url, application_name: 'pg-agent mcp --guard' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new AgentError(
      'DB_CONNECT_FAILED',
      `Cannot reach the guard at ${link.label}: ${error instanceof Error ? error.message : String(error)}`,
      'Is `pg-agent guard` running there, and is the guard user in the --guard URL right?',
    );
  }
  try {
    const result = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
    const results = Array.isArray(result) ? result : [result];
    return {
      kind: 'ran',
      rows: results.reduce((sum, r) => sum + (r.rowCount ?? 0), 0),
      command: results.map((r) => r.command).join(', '),
    };
  } catch (error) {
    const e = error as Partial<pg.DatabaseError>;
    if (typeof e.code !== 'string') throw error;
    // What the guard means is read from its typed fields; its words are only shown.
    const fields = readGuardFields(e.detail);
    const detail = detailForPeople(e.detail);
    const words: GuardWords = {
      message: e.message ?? '',
      ...(detail ? { detail } : {}),
      ...(e.hint ? { hint: e.hint } : {}),
    };
    if (e.code === GUARD_SQLSTATE.held && fields?.kind === 'held')
      return { kind: 'held', ticket: fields.ticket, risk: fields.risk, reused: fields.reused, words };
    if (e.code === GUARD_SQLSTATE.refused)
      throw new AgentError('SQL_REFUSED', `The guard did not run it: ${words.message}`, words.hint ?? 'Nothing ran.');
    throw new AgentError('DB_QUERY_FAILED', `${words.message} (SQLSTATE ${e.code}, from the guard)`, words.hint);
  } finally {
    await client.end().catch(() => undefined);
  }
}

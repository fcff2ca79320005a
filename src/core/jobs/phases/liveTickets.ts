/**
 * A job never has two live tickets for one todo (issue 12). A driver killed after a write's ticket was
 * created but before the graph recorded it leaves the ticket and impact/NNN.json behind; when the job goes
 * on and asks for the same write again, the pending ticket is picked up instead of a second one made, and a
 * pending ticket of the same todo for other SQL is voided, visibly, before the new one is proposed.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ticket } from '../../approvals/ticket';
import { SYSTEM_ACTOR } from '../../approvals/ticketStore';
import type { JobGraphDeps } from './jobGraphDeps';
import { isErrno } from '../../fs/errno';

interface HeldRecord {
  ticket: string;
  sql: string;
  sqlFile: string;
  todo: string | null;
}

/** Tickets still waiting for a person (or approved, not yet run): a second proposal must not race them. */
const LIVE = new Set<Ticket['status']>(['PENDING_APPROVAL', 'APPROVED']);

/** The job's earlier held writes, from impact/NNN.json (written when each was held). */
async function heldRecords(deps: JobGraphDeps, jobId: string): Promise<HeldRecord[]> {
  const names = await readdir(join(deps.store.jobDir(jobId), 'impact')).catch((error: unknown) => {
    if (isErrno(error, 'ENOENT')) return [] as string[];
    throw error;
  });
  const records: HeldRecord[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const json = JSON.parse(await deps.store.readFile(jobId, `impact/${name}`)) as Partial<HeldRecord>;
    if (typeof json.ticket === 'string' && typeof json.sql === 'string' && typeof json.sqlFile === 'string') {
      records.push({
        ticket: json.ticket,
        sql: json.sql,
        sqlFile: json.sqlFile,
        todo: typeof json.todo === 'string' ? json.todo : null,
      });
    }
  }
  return records;
}

/**
 * The live ticket this job already holds for exactly `sql` (same todo), if any; live tickets of the same
 * todo for other SQL are rejected as superseded (recorded on the ticket and in the job's audit).
 */
export async function takeOverLiveTicket(
  deps: JobGraphDeps,
  jobId: string,
  sql: string,
  todoId: string | null,
): Promise<{ ticket: Ticket; sqlFile: string } | undefined> {
  let reuse: { ticket: Ticket; sqlFile: string } | undefined;
  for (const record of await heldRecords(deps, jobId)) {
    if (todoId === null ? record.sql !== sql : record.todo !== todoId) continue;
    const ticket = await deps.ticketStore.get(record.ticket);
    if (!ticket || !LIVE.has(ticket.status)) continue;
    if (record.sql === sql && reuse === undefined) {
      reuse = { ticket, sqlFile: record.sqlFile };
      continue;
    }
    if (ticket.status !== 'PENDING_APPROVAL') continue; // an approved one is the person's: never voided here
    await deps.ticketStore.decide(ticket.id, {
      approve: false,
      by: SYSTEM_ACTOR,
      comment: 'superseded: the job proposed another statement for this todo after it was restarted',
    });
    await deps.audit(jobId, {
      type: 'sql',
      node: 'tacticalTools',
      sql: record.sql,
      outcome: 'refused',
      detail: `ticket ${ticket.id} voided: superseded by a new proposal for todo ${todoId ?? '(none)'}`,
    });
  }
  return reuse;
}

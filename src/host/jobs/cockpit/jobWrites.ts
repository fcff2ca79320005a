/**
 * Every write a job asked for, for its cockpit (issue 15: "each write's impact"): impact/NNN.json, written
 * when the write was held (its ticket, SQL, file, todo and impact report), with where its ticket stands now.
 * Read-only views: the write waiting now is decided on its own card, through the one approval path.
 */
import { TICKET_ID_SOURCE } from '../../../shared/ids';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ticket, TicketStatus } from '../../../core/approvals/ticket';
import { RISK_ORDER } from '../../../shared/impactReport';
import type { ApprovalStatus, ApprovalView, ImpactView } from '../../../shared/protocol';

/** The writes kept in a cockpit's snapshot (the newest). */
export const JOB_WRITES_SHOWN = 20;
const MAX_FILE_BYTES = 1_000_000;

/** What the ticket store says of a write's ticket (undefined: not found, e.g. another store). */
export interface WriteTicketState {
  status: TicketStatus;
  decisions: Pick<Ticket['decisions'][number], 'by' | 'approve'>[];
}

export interface JobWriteView extends ApprovalView {
  sqlFile: string;
  todoId: string | null;
}

const STATUS: Record<TicketStatus, ApprovalStatus> = {
  PENDING_APPROVAL: 'pending',
  APPROVED: 'running',
  EXECUTING: 'running',
  EXECUTED: 'executed',
  REJECTED: 'rejected',
  EXPIRED: 'rejected',
  FAILED: 'failed',
};

/** One impact/NNN.json as a write view, or undefined when the file is not one (a partial write, a hand edit). */
export function writeFromImpactFile(text: string, ticket: WriteTicketState | undefined): JobWriteView | undefined {
  let json: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    json = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { ticket: ticketId, sql, sqlFile, todo, ...impact } = json;
  if (typeof ticketId !== 'string' || typeof sql !== 'string' || typeof sqlFile !== 'string') return undefined;
  if (
    !(RISK_ORDER as readonly unknown[]).includes(impact.risk) ||
    !Array.isArray(impact.tables) ||
    !Array.isArray(impact.warnings)
  )
    return undefined;
  return {
    ticketId,
    sql,
    sqlFile,
    todoId: typeof todo === 'string' ? todo : null,
    // An unknown ticket (expired and purged, or in another store) is no longer waiting for anyone here.
    status: ticket ? STATUS[ticket.status] : 'rejected',
    impact: impact as unknown as ImpactView,
    ...(ticket && ticket.decisions.length > 0
      ? { decisions: ticket.decisions.map((d) => ({ by: d.by, approve: d.approve, signed: false })) }
      : {}),
  };
}

/** The job's writes, newest first. */
export async function readJobWrites(
  jobDir: string,
  ticketState: (ticketId: string) => Promise<WriteTicketState | undefined>,
): Promise<JobWriteView[]> {
  const entries = await readdir(join(jobDir, 'impact'), { withFileTypes: true }).catch(() => []);
  const names = entries
    .filter((e) => e.isFile() && /^\d+\.json$/.test(e.name))
    .map((e) => e.name)
    .sort()
    .reverse()
    .slice(0, JOB_WRITES_SHOWN);
  const writes: JobWriteView[] = [];
  for (const name of names) {
    const text = await readFile(join(jobDir, 'impact', name), 'utf8').catch(() => undefined);
    if (text === undefined || text.length > MAX_FILE_BYTES) continue;
    const ticketId = new RegExp(`"ticket"\\s*:\\s*"(${TICKET_ID_SOURCE})"`).exec(text)?.[1];
    const ticket = ticketId === undefined ? undefined : await ticketState(ticketId).catch(() => undefined);
    const write = writeFromImpactFile(text, ticket);
    if (write) writes.push(write);
  }
  return writes;
}

/** `pg-agent approvals list` as a table: id, status, database, risk, rows, age, origin and the statement. */
import { ticketRunner } from '../core/approvals/executorRule';
import type { Ticket } from '../core/approvals/ticket';
import { columns, formatCount } from '../core/present/format';
import { oneLine } from './ticketReport';

export function ticketTable(tickets: readonly Ticket[], now: Date): string {
  const header = ['TICKET', 'STATUS', 'DATABASE', 'RISK', 'ROWS', 'AGE', 'ORIGIN', 'WHAT'];
  return columns([
    header,
    ...tickets.map((t) => [
      t.id,
      t.status,
      databaseOf(t.connection),
      t.risk,
      t.kind === 'plan' ? `job ${t.plan?.jobId ?? '?'}` : formatCount(t.impact.exactRows ?? 0),
      ageOf(t.createdAt, now),
      originOf(t),
      oneLine(t),
    ]),
  ]);
}

/** "shop on 127.0.0.1:5432" from a connection key; "sample" for the sample database. */
export function databaseOf(connection: string): string {
  if (connection.startsWith('sample:')) return 'sample';
  const match = /^postgres:\/\/[^@]*@([^/]+)\/([^?]*)/.exec(connection);
  return match ? `${decodeURIComponent(match[2] ?? '')}@${match[1] ?? ''}` : connection;
}

/** Whose ticket: a job's plan, a guard client, an agent (MCP) or a person (CLI, VS Code), with the name. */
export function originOf(ticket: Ticket): string {
  if (ticket.kind === 'plan') return 'job plan';
  const runner = ticketRunner(ticket);
  if (runner.kind === 'guard client') return runner.transaction ? 'guard (transaction)' : 'guard';
  if (runner.kind === 'agent') return 'agent (MCP)';
  return `person (${ticket.createdBy})`;
}

export function ageOf(createdAt: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(createdAt)) / 1000));
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

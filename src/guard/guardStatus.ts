/**
 * What a running guard tells `pg-agent guard status`: `.pgagent/guard/status-<pid>.json`, one per guard process
 * (a window's Start Guarded Endpoint and a terminal's `pg-agent guard` may serve the same workspace at once),
 * rewritten (atomically) whenever a client comes, goes or gets a statement held; removed when that guard stops.
 * A file left by a guard that died is recognised by its pid, and removed by the next guard that starts there.
 * What its clients wait on (held statements and held transactions) is read from the ticket store when the
 * status is asked for, so it is never older than the tickets.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/fs/atomicWrite';
import { isErrno } from '../core/fs/errno';
import { processAlive } from '../core/fs/processAlive';
import type { Ticket, TicketStatus } from '../core/approvals/ticket';
import { isGuardTransaction } from '../core/approvals/ticket';
import type { TicketStore } from '../core/approvals/ticketStore';
import type { GuardClientInfo } from './guardServer';
import { guardDir } from './guardUsers';

export interface GuardStatus {
  pid: number;
  /** postgresql://host:port/database, without a user: what clients connect to. */
  listen: string;
  /** The upstream as a person reads it (no password). */
  upstream: string;
  startedAt: string;
  clients: GuardClientInfo[];
  /** Password-free key of the upstream, which its tickets are bound to (absent in files of older guards). */
  connection?: string;
}

/** A ticket the guard holds for a client: still to be decided, or approved and waiting for the client's retry. */
export interface HeldTicketInfo {
  ticket: string;
  status: TicketStatus;
  risk: Ticket['risk'];
  /** How many statements: 1 for a held statement; a transaction's, in order. */
  statements: number;
  /** Rows per table (a transaction's measured run; a statement's preview). */
  tables: { table: string; via: string; inserted: number; updated: number; deleted: number }[];
  /** When it was held (the ticket's creation). */
  since: string;
  by: string;
  /** Guard clients connected now whose statements wait on it. */
  clients: number[];
}

/** What a guard status lists besides its clients (additive to the status file's fields in --json). */
export interface HeldByGuard {
  heldStatements: HeldTicketInfo[];
  heldTransactions: HeldTicketInfo[];
}

const GUARD_CLIENT = 'guard user ';

/** The guard's held tickets (created for a guard user on its upstream, pending or approved), newest first. */
export async function heldByGuard(store: TicketStore, status: GuardStatus): Promise<HeldByGuard> {
  const tickets = await store.list({ status: ['PENDING_APPROVAL', 'APPROVED'] });
  const ours = tickets.filter(
    (t) =>
      t.kind === 'write' &&
      t.createdBy.startsWith(GUARD_CLIENT) &&
      (status.connection === undefined || t.connection === status.connection),
  );
  const info = (t: Ticket): HeldTicketInfo => ({
    ticket: t.id,
    status: t.status,
    risk: t.risk,
    statements: isGuardTransaction(t) ? (t.transaction?.statements.length ?? 0) : 1,
    tables: t.impact.tables.map((x) => ({
      table: `${x.schema}.${x.name}`,
      via: x.via,
      inserted: x.inserted,
      updated: x.updated,
      deleted: x.deleted,
    })),
    since: t.createdAt,
    by: t.createdBy.slice(GUARD_CLIENT.length),
    clients: status.clients.filter((c) => c.held.includes(t.id)).map((c) => c.id),
  });
  return {
    heldStatements: ours.filter((t) => !isGuardTransaction(t)).map(info),
    heldTransactions: ours.filter(isGuardTransaction).map(info),
  };
}

/** `pg-agent guard status` as text: the guard, its clients, then what is held. */
export function guardStatusText(s: GuardStatus, held: HeldByGuard | { error: string }): string {
  const lines = [
    `Guard pid ${s.pid} on ${s.listen} in front of ${s.upstream}, since ${s.startedAt}`,
    `${s.clients.length} client(s)`,
  ];
  for (const c of s.clients) {
    lines.push(
      `  #${c.id} ${c.user}${c.application ? ` (${c.application})` : ''} since ${c.since}${c.held.length ? `; waiting on ${c.held.join(', ')}` : ''}`,
    );
    if (c.waiting) lines.push(`    waits (--hold wait) on ticket ${c.waiting.ticket} since ${c.waiting.since}`);
  }
  if ('error' in held) {
    lines.push(`Held tickets unknown: ${held.error}`);
    return `${lines.join('\n')}\n`;
  }
  const rows = (h: HeldTicketInfo) =>
    h.tables
      .map(
        (t) =>
          `${t.table} ${[t.inserted ? `+${t.inserted}` : '', t.updated ? `~${t.updated}` : '', t.deleted ? `-${t.deleted}` : ''].filter(Boolean).join(' ') || '0'}${t.via === 'direct' ? '' : ` (${t.via})`}`,
      )
      .join(', ') || 'no rows';
  const line = (h: HeldTicketInfo, what: string) =>
    `  ${h.ticket} ${h.status === 'APPROVED' ? "approved, waiting for the client's retry" : 'waiting for approval'} · ${what} · ${h.risk} · ${rows(h)} · by ${h.by} since ${h.since}${h.clients.length ? ` · client ${h.clients.map((id) => `#${id}`).join(', ')}` : ''}`;
  lines.push(
    `${held.heldStatements.length} held statement(s)`,
    ...held.heldStatements.map((h) => line(h, 'statement')),
  );
  lines.push(
    `${held.heldTransactions.length} held transaction(s)`,
    ...held.heldTransactions.map((h) => line(h, `${h.statements} statement${h.statements === 1 ? '' : 's'}`)),
  );
  return `${lines.join('\n')}\n`;
}

const STATUS_FILE = /^status-(\d+)\.json$/;

function statusFile(workspaceDir: string, pid: number): string {
  return join(guardDir(workspaceDir), `status-${pid}.json`);
}

export async function writeGuardStatus(workspaceDir: string, status: GuardStatus): Promise<void> {
  await mkdir(guardDir(workspaceDir), { recursive: true, mode: 0o700 });
  await writeFileAtomic(statusFile(workspaceDir, status.pid), `${JSON.stringify(status, null, 2)}\n`);
}

export async function removeGuardStatus(workspaceDir: string, pid: number): Promise<void> {
  await rm(statusFile(workspaceDir, pid), { force: true });
}

/** A starting guard forgets the files of guards that died without cleaning up (SIGKILL, a crash). */
export async function removeDeadGuardStatuses(workspaceDir: string): Promise<void> {
  // By the file's own name: the pid inside a file is its content, never a path.
  for (const found of await readGuardStatuses(workspaceDir))
    if (!found.running) await rm(join(guardDir(workspaceDir), found.file), { force: true });
}

/**
 * Every guard that wrote a status in this workspace, running ones first, the most recently started first;
 * `running: false` for a file a dead guard left (or one whose pid is not the one its name says).
 */
export async function readGuardStatuses(
  workspaceDir: string,
): Promise<{ file: string; status: GuardStatus; running: boolean }[]> {
  let names: string[];
  try {
    names = await readdir(guardDir(workspaceDir));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return [];
    throw error;
  }
  const found: { file: string; status: GuardStatus; running: boolean }[] = [];
  for (const file of names) {
    const pid = Number(STATUS_FILE.exec(file)?.[1]);
    if (!pid) continue;
    try {
      const status = JSON.parse(await readFile(join(guardDir(workspaceDir), file), 'utf8')) as GuardStatus;
      found.push({ file, status, running: status.pid === pid && processAlive(pid) });
    } catch (error) {
      // Removed by its guard since the listing: that guard has stopped.
      if (!isErrno(error, 'ENOENT')) throw error;
    }
  }
  return found.sort(
    (a, b) =>
      Number(b.running) - Number(a.running) || String(b.status.startedAt).localeCompare(String(a.status.startedAt)),
  );
}

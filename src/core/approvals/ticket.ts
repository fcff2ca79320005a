/**
 * Approval tickets (SPEC §5.3): a person's decision about one exact statement on one connection, with
 * its impact, risk and expiry; single use, and verified again when it is executed.
 */
import { createHash } from 'node:crypto';
import type { ImpactReport, Risk } from '../sql/impactReport';

export type TicketStatus =
  | 'PENDING_APPROVAL'
  | 'APPROVED'
  | 'REJECTED'
  | 'EXPIRED'
  /** Claimed by an execution in progress: no one else can use it. */
  | 'EXECUTING'
  | 'EXECUTED'
  /** Execution was attempted and rolled back; the ticket is spent. */
  | 'FAILED';

export type TicketAction = 'created' | 'approved' | 'rejected' | 'expired' | 'claimed' | 'executed' | 'failed';

export interface TicketEvent {
  action: TicketAction;
  /** Who: a person's name for decisions, "pg-agent"/"vscode" for the system. */
  by: string;
  /** ISO-8601. */
  at: string;
  comment?: string;
}

export interface Ticket {
  /** "tkt_" + 20 base32 characters. */
  id: string;
  /** The exact SQL that was previewed and is to be approved, byte for byte. */
  sql: string;
  /** sha256 (hex) of `sql`. */
  sqlHash: string;
  /** Which database: a password-free key such as "postgres://app@db:5432/shop" or "sample:/abs/dir". */
  connection: string;
  impact: ImpactReport;
  risk: Risk;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  status: TicketStatus;
  history: TicketEvent[];
}

export const TICKET_TTL_MS = 24 * 60 * 60 * 1000;

export function sqlHash(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

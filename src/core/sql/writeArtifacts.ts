/** Readable files a reviewed write leaves in the workspace: its impact report and its undo script. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ticket } from '../approvals/ticket';
import type { UndoScript } from './undoCapture';

export async function saveImpactReport(impactDir: string, ticket: Ticket): Promise<string> {
  await mkdir(impactDir, { recursive: true });
  const file = join(impactDir, `${ticket.id}.json`);
  await writeFile(file, `${JSON.stringify({ ticket: ticket.id, sql: ticket.sql, connection: ticket.connection, ...ticket.impact }, null, 2)}\n`);
  return file;
}

export async function saveUndoScript(undoDir: string, ticketId: string, undo: UndoScript): Promise<string> {
  await mkdir(undoDir, { recursive: true });
  const file = join(undoDir, `${ticketId}.sql`);
  const notes = undo.warnings.map((w) => `-- ! ${w}\n`).join('');
  await writeFile(file, `-- Undo of ticket ${ticketId}\n${notes}${undo.sql}`);
  return file;
}

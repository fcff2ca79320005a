/** Readable files a reviewed write leaves in the workspace: its impact report and its undo script. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomicWrite';
import { isErrno } from '../fs/errno';
import type { Ticket } from '../approvals/ticket';
import type { UndoSink } from './approvedTicket';
import type { UndoScript } from './undoCapture';

export async function saveImpactReport(impactDir: string, ticket: Ticket): Promise<string> {
  await mkdir(impactDir, { recursive: true });
  const file = join(impactDir, `${ticket.id}.json`);
  await writeFile(
    file,
    `${JSON.stringify({ ticket: ticket.id, sql: ticket.sql, connection: ticket.connection, ...ticket.impact }, null, 2)}\n`,
  );
  return file;
}

/** The undo script's text: a header saying which execution it belongs to, its warnings, the SQL. */
export function undoFileText(header: string, undo: UndoScript): string {
  const notes = undo.warnings.map((w) => `-- ! ${w}\n`).join('');
  return `${header}${notes}${undo.sql}`;
}

export async function saveUndoScript(
  undoDir: string,
  ticketId: string,
  undo: UndoScript,
  header = `-- Undo of ticket ${ticketId}\n`,
): Promise<string> {
  await mkdir(undoDir, { recursive: true });
  const file = join(undoDir, `${ticketId}.sql`);
  // Written whole and renamed into place: a crash never leaves half an undo script.
  await writeFileAtomic(file, undoFileText(header, undo));
  return file;
}

export const VOID_MARK = '-- VOID:';

/** Text of an undo script whose write never committed: every line commented out under a VOID line. */
export function voidedUndoText(text: string, reason: string): string {
  if (text.startsWith(VOID_MARK)) return text;
  const kept = text
    .split('\n')
    .map((line) => (line === '' ? line : `-- ${line}`))
    .join('\n');
  return `${VOID_MARK} ${reason.replace(/\s+/g, ' ')}\n-- There is nothing to undo; the script that was prepared is kept below, commented out.\n${kept}`;
}

/** Marks a workspace undo script void in place; a file that is not there (another machine's) is left alone. */
export async function voidUndoFile(file: string, reason: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false;
    throw error;
  }
  if (text.startsWith(VOID_MARK)) return false;
  await writeFileAtomic(file, voidedUndoText(text, reason));
  return true;
}

/** Undo scripts of writes run outside a job: `.pgagent/undo/<ticket>.sql`. */
export function workspaceUndoSink(undoDir: string, ticketId: string): UndoSink {
  return {
    save: (undo, header) => saveUndoScript(undoDir, ticketId, undo, header),
    markVoid: async (file, reason) => {
      await voidUndoFile(file, reason);
    },
  };
}

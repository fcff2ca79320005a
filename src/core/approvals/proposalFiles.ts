/**
 * A write an outside agent (MCP) or a guard client proposes is left as `.pgagent/proposals/<ticket>.sql`: a short header (who,
 * why) and the ticket's exact SQL (a guard client's transaction: its statements with their values, in order). VS Code watches the folder and shows the file with the same CodeLens
 * and approval card as any held write. The file is for people; the ticket alone decides what may run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hiddenWarning, visibleSql, visibleText } from '../../shared/visibleSql';
import { workspacePaths } from '../config/workspace';

export function proposalsDir(workspaceDir: string): string {
  return workspacePaths(workspaceDir).proposals;
}

/**
 * The header comment: one line each, whatever the model wrote (a newline cannot end the comment early, a hidden
 * character is shown as its stand-in); a statement holding hidden characters is flagged in the header, since an
 * editor draws some of them as nothing. The SQL itself stays exact: it is what the ticket runs.
 */
export function proposalText(
  ticketId: string,
  sql: string,
  proposedBy: string,
  reason: string,
  runs = 'the agent runs it',
): string {
  const oneLine = (text: string) =>
    visibleText(text)
      .replace(/[\r\n]+/g, ' ')
      .trim();
  const hidden = visibleSql(sql).hidden;
  return (
    `-- Proposed by ${oneLine(proposedBy)}: ${oneLine(reason)}\n` +
    `-- Ticket ${ticketId}. Nothing runs until a person approves it (CodeLens above the SQL, or pg-agent approvals approve ${ticketId}); then ${oneLine(runs)}.\n` +
    (hidden.length > 0
      ? `-- WARNING: the SQL below ${hiddenWarning(hidden)}; the editor may draw them as nothing. It runs with them.\n`
      : '') +
    `${sql}\n`
  );
}

/** Where the ticket's SQL starts in a proposal file, or undefined when the file does not hold that SQL. */
export function sqlOffset(text: string, sql: string): number | undefined {
  const start = text.length - sql.length - 1;
  return start >= 0 && text.slice(start, start + sql.length) === sql ? start : undefined;
}

/** `runs`: who runs it once approved (default "the agent runs it"; a guard transaction: the client's retry commits it). */
export async function writeProposal(
  workspaceDir: string,
  ticketId: string,
  sql: string,
  proposedBy: string,
  reason: string,
  runs?: string,
): Promise<string> {
  const dir = proposalsDir(workspaceDir);
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${ticketId}.sql`);
  await writeFile(file, proposalText(ticketId, sql, proposedBy, reason, runs));
  return file;
}

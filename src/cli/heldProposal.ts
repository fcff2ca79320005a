/** How `undo` and `quarantine purge` show the write they propose: its SQL, impact and held ticket (as `sql` does). */
import { renderImpact } from '../core/present/renderImpact';
import { statementsJson, ticketSummary } from '../core/present/outputJson';
import { shownStatement } from '../core/present/shownSql';
import { classifySql } from '../core/sql/classify';
import type { HeldProposal } from '../core/sql/undoProposal';
import type { PolicyWarning } from '../core/settings/workspacePolicy';
import { visibleText } from '../shared/visibleSql';
import type { CommandContext } from './command';
import { withPolicyWarnings } from './sqlInput';

export function printHeldProposal(
  context: CommandContext,
  proposal: HeldProposal,
  warnings: readonly PolicyWarning[],
  title: string,
): void {
  const { io, args } = context;
  const { ticket, impact } = proposal;
  if (args.flags.json) {
    const held = {
      status: 'held',
      statements: statementsJson(classifySql(ticket.sql)),
      fields: [],
      rows: [],
      rowCount: 0,
      truncated: false,
      impact: withPolicyWarnings(impact, warnings),
      ticket: ticketSummary(ticket),
    };
    io.stdout(`${JSON.stringify(held)}\n`);
    return;
  }
  // An undo script can be thousands of statements: its summary and file, never the whole script on the terminal.
  const shown =
    proposal.file !== undefined ? scriptSummary(ticket.sql, proposal.file, ticket.id) : shownStatement(ticket.sql).text;
  io.stdout(
    `${visibleText(title)}:\n\n${shown}\n\n${renderImpact(impact)}\n\nHeld for approval: ticket ${ticket.id} (expires ${ticket.expiresAt}).\n`,
  );
  io.stdout(
    `  approve: pg-agent approvals approve ${ticket.id} --comment "…"\n  run:     pg-agent exec --ticket ${ticket.id}\n`,
  );
}

/** "Undo script: 3 statements (66 KB), in full in <file>", then the statement of each table (one per table and kind). */
export function scriptSummary(sql: string, file: string, ticketId: string): string {
  const counts = new Map<string, number>();
  let statements = 0;
  for (const match of sql.matchAll(
    /^\s*(INSERT INTO|UPDATE|DELETE FROM)\s+((?:"[^"]+"|[\w$]+)(?:\.(?:"[^"]+"|[\w$]+))?)/gim,
  )) {
    statements++;
    const key = `${(match[1] ?? '').split(' ')[0]?.toUpperCase() ?? ''} ${match[2] ?? ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const kb = Buffer.byteLength(sql, 'utf8') / 1024;
  const size = kb < 1 ? `${Buffer.byteLength(sql, 'utf8')} bytes` : `${kb.toFixed(kb < 10 ? 1 : 0)} KB`;
  const lines = [...counts].map(([what, n]) => `  ${visibleText(what)}: ${n} statement${n === 1 ? '' : 's'}`);
  return [
    `Undo script: ${statements} statement${statements === 1 ? '' : 's'} (${size}), in full in ${visibleText(file)}`,
    ...lines,
    `  every statement: pg-agent approvals show ${ticketId}`,
  ].join('\n');
}

/**
 * How `pg-agent approvals` shows a ticket, wherever it was read from (the store, or a broker over --guard): what
 * runs is the ticket's SQL, shown with every hidden character visible and flagged (SPEC §5 3a), its impact, its
 * history and decisions (which signatures count under the rules given).
 */
import type { ApprovalRules } from '../core/approvals/approvalPolicy';
import { signatureState } from '../core/approvals/approvalPolicy';
import type { Ticket } from '../core/approvals/ticket';
import { renderImpact } from '../core/present/renderImpact';
import { shownOneLine, shownStatement } from '../core/present/shownSql';
import { visibleText } from '../shared/visibleSql';
import type { CliIo } from './command';

export function printTicket(io: Pick<CliIo, 'stdout'>, ticket: Ticket, rules: ApprovalRules | undefined): void {
  io.stdout(
    visibleText(
      `${ticket.id} · ${ticket.kind} · ${ticket.status} · ${ticket.connection} · requested by ${ticket.createdBy}\n\n`,
    ),
  );
  io.stdout(`${shownStatement(ticket.sql).text}\n\n`);
  if (ticket.kind === 'write') io.stdout(`${renderImpact(ticket.impact)}\n\n`);
  for (const h of ticket.history)
    io.stdout(visibleText(`  ${h.at}  ${h.action} by ${h.by}${h.comment ? `: ${h.comment}` : ''}\n`));
  for (const d of ticket.decisions)
    io.stdout(
      visibleText(
        `  decision: ${d.approve ? 'approve' : 'reject'} by ${d.by} · ${signedWord(ticket, d, rules)}${d.signature?.scope ? ` · for database ${d.signature.scope.database}, policy version ${d.signature.scope.policyVersion}` : ''}\n`,
      ),
    );
  if (ticket.status === 'EXECUTING')
    io.stdout(
      `\nStill EXECUTING: its transaction ${ticket.execution?.xid ?? '?'} has not ended, or its database cannot be reached from here (pass --db).\n`,
    );
}

/** The ticket as scripts read it: every stored field, plus kind, requestedBy and decisions with a `signed` mark. */
export function ticketJson(ticket: Ticket, rules: ApprovalRules | undefined) {
  return {
    ...ticket,
    requestedBy: ticket.createdBy,
    decisions: ticket.decisions.map((d) => ({
      by: d.by,
      approve: d.approve,
      signed: rules !== undefined && signatureState(ticket, d, rules.approvers) === 'verified',
      at: d.at,
      ...(d.signature?.scope ? { scope: d.signature.scope } : {}),
      ...(d.comment !== undefined ? { comment: d.comment } : {}),
    })),
  };
}

function signedWord(ticket: Ticket, decision: Ticket['decisions'][number], rules: ApprovalRules | undefined): string {
  const state = rules
    ? signatureState(ticket, decision, rules.approvers)
    : decision.signature
      ? 'unknown-key'
      : 'unsigned';
  switch (state) {
    case 'verified':
      return 'signed ✓';
    case 'forged':
      return 'SIGNATURE DOES NOT VERIFY';
    case 'unknown-key':
      return `signed by key "${decision.signature?.keyName ?? ''}", not in approval.approvers`;
    case 'unsigned':
      return 'unsigned';
  }
}

/** The statement (or plan title) in one line; a statement with hidden characters starts with "[hidden chars]". */
export function oneLine(ticket: Ticket): string {
  return shownOneLine(ticket.kind === 'plan' ? (ticket.plan?.title ?? 'plan') : ticket.sql);
}

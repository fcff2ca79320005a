/**
 * How the guard tells a client what happened to a statement it did not pass: the held ticket (SQLSTATE
 * PA001) with its risk, rows per table and the approve command, a refusal (PA002) or a failure (PA003).
 */
import type { Ticket } from '../../core/approvals/ticket';
import { toAgentError } from '../../core/platform/errors';
import type { Verdict } from '../judge/judge';
import type { ErrorFields } from '../wire/backendMessages';
import { GUARD_SQLSTATE } from '../sqlstates';
import { withGuardFields } from '../../shared/guardAnswers';

/** `waitedSeconds`: `--hold wait` gave up after that long. */
export function heldError(ticket: Ticket, reused: boolean, waitedSeconds?: number): ErrorFields {
  const impact = ticket.impact;
  const tables = impact.tables.map((t) => {
    const parts = [
      t.inserted ? `${t.inserted} inserted` : '',
      t.updated ? `${t.updated} updated` : '',
      t.deleted ? `${t.deleted} deleted` : '',
    ].filter(Boolean);
    return `${t.schema}.${t.name}: ${parts.join(', ') || 'no rows'}${t.via === 'direct' ? '' : ` (${t.via})`}`;
  });
  const rows = impact.exactRows === null ? 'rows not previewed' : `${impact.exactRows} row(s)`;
  const detail = [
    tables.length > 0 ? `Rows per table: ${tables.join('; ')}.` : '',
    impact.wouldFail ? `It would fail: ${impact.wouldFail.code} ${impact.wouldFail.message}.` : '',
    impact.warnings.length > 0 ? `Warnings: ${impact.warnings.join(' ')}` : '',
  ].filter(Boolean);
  return {
    code: GUARD_SQLSTATE.held,
    message: `held for approval: ticket ${ticket.id} (risk ${impact.risk}, ${rows}${waitedSeconds !== undefined ? `, still waiting after ${waitedSeconds} s` : reused ? ', still waiting' : ''}); nothing ran`,
    detail: withGuardFields(detail.join('\n'), {
      kind: 'held',
      ticket: ticket.id,
      risk: impact.risk,
      reused,
      ...(waitedSeconds !== undefined ? { waitedSeconds } : {}),
    }),
    hint: `A person approves it with: pg-agent approvals approve ${ticket.id} (or in VS Code, "Waiting for you"). Then send the identical statement again: it runs once.`,
  };
}

export function refusedError(message: string, hint?: string): ErrorFields {
  return {
    code: GUARD_SQLSTATE.refused,
    message,
    detail: withGuardFields(undefined, { kind: 'refused' }),
    ...(hint ? { hint } : {}),
  };
}

export function failedError(error: unknown): ErrorFields {
  const e = toAgentError(error);
  return {
    code: GUARD_SQLSTATE.failed,
    message: `the guard could not judge or run this statement; nothing ran: ${e.message}`,
    ...(e.advice ? { hint: e.advice } : {}),
  };
}

/** The guard's answer for a statement it neither passes nor holds: a syntax error, a refusal, or a failure to judge. */
export function verdictError(
  verdict: Exclude<Verdict, { kind: 'pass' | 'hold' }> | { kind: 'failed'; error: unknown },
): ErrorFields {
  switch (verdict.kind) {
    case 'syntax':
      return { code: '42601', message: verdict.message, position: verdict.position + 1 };
    case 'refuse':
      return refusedError(`refused by the guard: ${verdict.reasons.join('; ')}`);
    case 'failed':
      return failedError(verdict.error);
  }
}

/** A CancelRequest ended the client's `--hold wait` (PostgreSQL's own message for a cancelled statement). */
export const CANCELED: ErrorFields = { code: '57014', message: 'canceling statement due to user request' };
export const ABORTED: ErrorFields = {
  code: '25P02',
  message: 'current transaction is aborted, commands ignored until end of transaction block',
};
export const NOT_IN_TRANSACTION =
  "not run: this write came after the transaction's first query, too late to measure it; the transaction was rolled back (nothing it did is kept, no lock is held)";
export const NOT_IN_TRANSACTION_HINT =
  'Send the write on its own, outside BEGIN … COMMIT, or start the transaction with a write: it is then held as a whole at COMMIT.';
export const NOT_WHOLE =
  'the guard approves a transaction as a whole that ends with one COMMIT or ROLLBACK on its own (no SAVEPOINT, AND CHAIN or COMMIT among other statements yet)';
export const WHOLE_HINT = 'Send COMMIT on its own; without savepoints.';

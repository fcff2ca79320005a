/**
 * The side panel as a navigator (issue 15): what is waiting for a person, from the ticket store, and the
 * recent asks. Plain data in, plain data out (no VS Code), so the rules are unit-tested under Node.
 */
import type { Ticket } from '../../core/approvals/ticket';
import type {
  AnswerView,
  PanelAnswerView,
  RecentAskView,
  ResultsView,
  RowsSummary,
  WaitingView,
} from '../../shared/protocol';
import { visibleSql, visibleText } from '../../shared/visibleSql';

/** A pending ticket as the navigator lists it (the SQL cut to its start). */
/** `hiddenChars`: how many hidden characters the whole SQL holds (the navigator flags it; sqlStart is only its start). */
/** `statements`: a client transaction held whole by pg-agent guard, and how many statements it has. */
export type PendingTicket = Pick<Ticket, 'id' | 'kind' | 'risk' | 'createdBy' | 'createdAt' | 'plan'> & {
  sqlStart: string;
  hiddenChars?: number;
  statements?: number;
};

/** The recent asks kept (and shown). */
export const RECENT_ASKS_KEPT = 8;

/**
 * The first line of a statement, for a one-line item (the whole SQL is on the card or in the editor); its
 * hidden characters shown as stand-ins, and the line starts with "⚠ hidden characters ·" when it has any.
 */
export function firstLine(sql: string, max = 80, flagged = false): string {
  const { text, hidden } = visibleSql(sql.trim());
  const first =
    text
      .split('\n')
      .find((l) => l.trim() !== '' && !l.trim().startsWith('--'))
      ?.trim() ?? text;
  const line = hidden.length > 0 || flagged ? `⚠ hidden characters · ${first}` : first;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Pending tickets as the navigator lists them: a plan names its job; a write names the job holding it when
 * this window knows it, and says whether this window tracks it (its CodeLens and card are here).
 */
export function waitingView(
  pending: readonly PendingTicket[],
  trackedHere: ReadonlySet<string>,
  jobOfTicket: (ticketId: string) => string | undefined,
): WaitingView[] {
  return pending.map((t) => ({
    ticketId: t.id,
    kind: t.kind,
    title:
      t.kind === 'plan'
        ? visibleText(t.plan?.title ?? "a job's plan")
        : firstLine(t.sqlStart, 80, (t.hiddenChars ?? 0) > 0),
    risk: t.risk,
    createdBy: t.createdBy,
    createdAt: t.createdAt,
    jobId: t.plan?.jobId ?? jobOfTicket(t.id) ?? null,
    here: trackedHere.has(t.id),
    ...(t.statements !== undefined ? { statements: t.statements } : {}),
  }));
}

/**
 * The recent asks after `answer` was shown: a new run goes first, a run already listed takes its new
 * status (its place and time stay); undefined when nothing changed (nothing to save).
 */
export function withAnswer(
  recent: readonly RecentAskView[],
  answer: AnswerView | null,
  now: () => Date = () => new Date(),
): RecentAskView[] | undefined {
  if (answer === null) return undefined;
  const sql = answer.sql ?? undefined;
  const listed = recent.find((r) => r.threadId === answer.threadId);
  if (listed) {
    if (listed.status === answer.status && listed.question === answer.question && listed.sql === sql) return undefined;
    return recent.map((r) =>
      r.threadId === answer.threadId
        ? { ...r, status: answer.status, question: answer.question, ...(sql !== undefined ? { sql } : {}) }
        : r,
    );
  }
  return [
    {
      threadId: answer.threadId,
      question: answer.question,
      status: answer.status,
      at: now().toISOString(),
      ...(sql !== undefined ? { sql } : {}),
    },
    ...recent,
  ].slice(0, RECENT_ASKS_KEPT);
}

/** A result as the side panel shows it: its size and SQL; the rows stay in the host and the Results view. */
export function rowsSummary(view: ResultsView | null): RowsSummary | null {
  return view === null
    ? null
    : {
        sql: view.sql,
        rowCount: view.rowCount,
        columns: view.fields.length,
        truncated: view.truncated,
        elapsedMs: view.elapsedMs,
      };
}

/** The latest answer as the side panel shows it (rows as a summary). */
export function panelAnswer(answer: AnswerView | null): PanelAnswerView | null {
  return answer === null ? null : { ...answer, results: rowsSummary(answer.results) };
}

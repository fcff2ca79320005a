/**
 * How `pg-agent job` reports where a job stands: one JSON object with --json, else the plan, the todos and
 * what to do next for a person; and the exit code the stop means (SPEC §6 codes, decided in jobCommand's help).
 */
import type { Ticket } from '../core/approvals/ticket';
import type { TicketStore } from '../core/approvals/ticketStore';
import type { JobDetail } from '../core/jobs/jobDetail';
import { readJobDetail } from '../core/jobs/jobDetail';
import type { JobOutcome } from '../core/jobs/jobOutcome';
import type { JobStore } from '../core/jobs/jobStore';
import type { Todo, TodoStatus } from '../core/jobs/todos';
import type { Usage } from '../core/ask/state';
import type { CommandContext } from './command';
import { EXIT } from './exitCodes';
import type { ExitCode } from './exitCodes';
import { formatCount } from '../core/present/format';
import { renderImpact } from '../core/present/renderImpact';
import { shownOneLine, shownStatement } from '../core/present/shownSql';
import { ticketSummary } from '../core/present/outputJson';
import { visibleText } from '../shared/visibleSql';

/** `viewed`: show/cancel (exit 0 whatever the stop); `ran`: the action ran the job, the stop decides the code. */
export type ReportMode = 'viewed' | 'ran';

export async function reportOutcome(
  context: CommandContext,
  deps: { store: JobStore; ticketStore: TicketStore },
  outcome: JobOutcome,
  mode: ReportMode,
): Promise<ExitCode> {
  const { io, args } = context;
  const detail = await readJobDetail(deps.store, outcome);
  const ticket = outcome.stop.kind === 'approval' ? await deps.ticketStore.get(outcome.stop.ticketId) : undefined;
  if (args.flags.json) {
    io.stdout(`${JSON.stringify(jobJson(detail, outcome, ticket))}\n`);
  } else {
    // plan.md, titles and todos are the model's writing: shown, never obeyed by the terminal.
    io.stdout(`${visibleText(renderJob(detail, outcome, ticket, mode))}\n`);
  }
  const error =
    outcome.stop.kind === 'failed'
      ? outcome.stop.error
      : outcome.stop.kind === 'interrupted'
        ? outcome.stop.error
        : undefined;
  if (error && mode === 'ran') io.stderr(`error: ${error.message}\n${error.advice ? `  ${error.advice}\n` : ''}`);
  return mode === 'viewed' ? EXIT.ok : exitFor(outcome);
}

/** The code of a stop reached by running the job. */
export function exitFor(outcome: JobOutcome): ExitCode {
  switch (outcome.stop.kind) {
    case 'review':
    case 'completed':
    case 'cancelled':
    case 'frozen':
      return EXIT.ok;
    case 'approval':
      return EXIT.held;
    case 'failed':
    case 'interrupted':
      return EXIT.failed;
    default: {
      const unexpected: never = outcome.stop;
      throw new Error(`unknown job stop ${JSON.stringify(unexpected)}`);
    }
  }
}

/** The job-level --json object: `{job, stop, todos, planChange, usage, plan, ticket?, execution?}`. */
export function jobJson(detail: JobDetail, outcome: JobOutcome, ticket: Ticket | undefined) {
  return {
    job: detail.job,
    stop: detail.stop,
    todos: detail.todos.ok ? detail.todos.items : [],
    ...(detail.todos.ok ? {} : { todosError: detail.todos.error }),
    planChange: detail.planChange,
    usage: detail.usage,
    plan: detail.planMd,
    ...(ticket ? { ticket: ticketSummary(ticket) } : {}),
    ...(outcome.execution ? { execution: outcome.execution } : {}),
  };
}

const MARKS: Record<TodoStatus, string> = {
  pending: '[ ]',
  in_progress: '[~]',
  done: '[x]',
  skipped: '[-]',
  failed: '[!]',
};

export function renderTodos(todos: JobDetail['todos']): string {
  if (!todos.ok) return `Todos: todos.yaml does not parse: ${todos.error}`;
  if (todos.items.length === 0) return 'Todos: none yet.';
  const width = Math.max(...todos.items.map((t) => t.id.length));
  const line = (t: Todo) => {
    const deps = t.depends_on?.length ? ` (after ${t.depends_on.join(', ')})` : '';
    const sql = t.sql ? `\n      ${shownOneLine(t.sql, 100)}` : '';
    return `  ${MARKS[t.status]} ${t.id.padEnd(width)}  ${t.title}${deps}${sql}`;
  };
  return ['Todos:', ...todos.items.map(line)].join('\n');
}

export function renderUsage(usage: Usage): string {
  const cost = usage.costUsd === null ? 'cost unknown' : `$${usage.costUsd.toFixed(4)}`;
  return `Model: ${formatCount(usage.calls)} call(s) · ${formatCount(usage.inputTokens)} tokens in · ${formatCount(usage.outputTokens)} out · ${cost}`;
}

function renderJob(detail: JobDetail, outcome: JobOutcome, ticket: Ticket | undefined, mode: ReportMode): string {
  const { job, stop } = detail;
  const id = job.id;
  const status = job.status === 'frozen' && job.frozenFrom ? `frozen (from ${job.frozenFrom})` : job.status;
  const out: string[] = [
    `Job ${id} · ${status} · ${job.phase} phase · review cycle ${job.reviewCycles}${job.skipReview ? ' · review skipped' : ''}`,
    `  ${job.title}`,
    `  database ${job.connection} · created ${job.createdAt} · updated ${job.updatedAt}`,
    `  files .pgagent/jobs/${id}/ (workspace.md, plan.md, todos.yaml)`,
    '',
  ];
  const showPlan = mode === 'viewed' || stop.kind === 'review';
  if (showPlan) out.push(detail.planMd.trimEnd() || '(plan.md is empty)', '', renderTodos(detail.todos), '');
  if (showPlan && detail.planChange) {
    out.push(
      `Plan changes since review ${detail.planChange.fromCycle} (now review ${detail.planChange.toCycle}):`,
      detail.planChange.diff.trimEnd() || '  (plan.md did not change)',
      '',
    );
  }
  if (outcome.execution) {
    const e = outcome.execution;
    out.push(
      `Executed (ticket ${e.ticketId}): ${formatCount(e.rows)} row(s) changed. Undo script: .pgagent/jobs/${id}/${e.undoFile}`,
      '',
    );
  }
  switch (stop.kind) {
    case 'review':
      out.push(
        `Waiting for your review of the plan (review ${stop.cycle} of at most ${stop.maxReviewCycles}).`,
        ...(stop.overLimit
          ? [`The review-cycle limit is reached: consider running the plan as is (pg-agent job skip ${id}).`]
          : []),
        `  approve:   pg-agent job approve ${id} [--comment "…"]`,
        `  revise:    pg-agent job revise ${id} --feedback "…"`,
        `  discuss:   pg-agent job chat ${id} -- "…"`,
        `  run as is: pg-agent job skip ${id}`,
      );
      break;
    case 'approval':
      out.push(
        `Held for approval${stop.todoId ? ` (todo ${stop.todoId})` : ''}: .pgagent/jobs/${id}/${stop.sqlFile}`,
        '',
        // What runs is the ticket's own SQL, shown with every hidden character visible and flagged.
        shownStatement((ticket?.sql ?? stop.sql).trimEnd()).text,
        '',
        renderImpact(stop.impact),
        '',
        ticket
          ? `Ticket ${ticket.id} · ${ticket.status} · expires ${ticket.expiresAt}`
          : `Ticket ${stop.ticketId} was not found in the ticket store (expired or removed): cancel the job with pg-agent job cancel ${id}.`,
        ...(ticket?.status === 'PENDING_APPROVAL'
          ? [
              `  approve:  pg-agent approvals approve ${ticket.id} --comment "…"`,
              `  reject:   pg-agent approvals reject ${ticket.id} --comment "…"`,
              `  then:     pg-agent job continue ${id}   (with the same --db; on a terminal, continue asks you instead)`,
            ]
          : ticket && stop.lockWait && ticket.status === 'APPROVED'
            ? [
                `Not run yet: ${stop.lockWait}`,
                `  the ticket is still approved; when they are done: pg-agent job continue ${id}`,
              ]
            : ticket
              ? [`  the ticket is decided: pg-agent job continue ${id}`]
              : []),
      );
      break;
    case 'completed':
      out.push(`Completed${stop.summary ? `: ${stop.summary}` : '.'}`);
      break;
    case 'failed':
      out.push(`Failed: ${stop.error.message}${stop.error.advice ? `\n  ${stop.error.advice}` : ''}`);
      break;
    case 'cancelled':
      out.push('Cancelled.');
      break;
    case 'frozen':
      out.push(`Paused. Go on with: pg-agent job continue ${id}`);
      break;
    case 'interrupted':
      out.push(
        stop.error
          ? `Stopped half-way: ${stop.error.message}\n  Nothing was lost; once the cause is fixed, go on with: pg-agent job continue ${id}`
          : `Not running and not at a stop (interrupted). Go on with: pg-agent job continue ${id}`,
      );
      break;
    default: {
      const unexpected: never = stop;
      out.push(`Unknown stop ${JSON.stringify(unexpected)}`);
    }
  }
  out.push('', renderUsage(detail.usage));
  return out.join('\n');
}

export function oneLine(text: string, max = 60): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

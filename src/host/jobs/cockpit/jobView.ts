/**
 * Core's view of a job (JobDetail, chat entries, the held write) to the panel's JobView and job list.
 * Plain data in, plain data out: no VS Code here, so it is unit-tested under Node.
 */
import type { Job } from '../../../core/jobs/job';
import type { JobDetail } from '../../../core/jobs/jobDetail';
import type { JobStop } from '../../../core/jobs/jobOutcome';
import type { ChatEntry } from '../../../core/review/chatLog';
import type { ErrorInfo } from '../../../shared/errorCodes';
import type {
  ApprovalView,
  ChatEntryView,
  ChatView,
  JobBusyView,
  JobListItem,
  JobStopView,
  JobView,
  TodosView,
} from '../../../shared/protocol';
import type { JobBarState } from '../../ui/statusBar';
import { jobStateText } from '../../../shared/jobActions';

/** What this window knows about a job beyond its files. */
export interface JobLocalState {
  busy: JobBusyView | null;
  error: ErrorInfo | null;
  /** The chat message in flight and its reply so far. */
  pendingChat: { text: string; reply: string } | null;
  /** The last chat message that failed, and why. */
  chatError: { text: string; error: ErrorInfo } | null;
}

export const IDLE: JobLocalState = { busy: null, error: null, pendingChat: null, chatError: null };

/**
 * A job in the side panel's list. `busy`: this window works on it (`action`: the step it runs, if one);
 * `stop`: why it is not running, when the job was read in full. Its `state` is the status bar's text too.
 */
export function toListItem(
  job: Pick<Job, 'id' | 'title' | 'status' | 'phase' | 'reviewCycles' | 'updatedAt'>,
  busy: boolean,
  action?: JobBusyView['action'] | null,
  stop?: JobStopView['kind'] | null,
): JobListItem {
  return {
    id: job.id,
    title: job.title,
    status: job.status,
    phase: job.phase,
    reviewCycles: job.reviewCycles,
    updatedAt: job.updatedAt,
    busy,
    state: jobStateText({ status: job.status, busy: busy ? (action ?? true) : null, stop: stop ?? null }),
  };
}

export function toStopView(stop: JobStop): JobStopView {
  switch (stop.kind) {
    case 'approval':
      return { kind: 'approval', ticketId: stop.ticketId, sqlFile: stop.sqlFile, todoId: stop.todoId };
    case 'review':
      return {
        kind: 'review',
        cycle: stop.cycle,
        maxReviewCycles: stop.maxReviewCycles,
        overLimit: stop.overLimit,
        ticketId: stop.ticketId ?? null,
        planHash: stop.planHash ?? null,
      };
    case 'completed':
      return { kind: 'completed', summary: stop.summary };
    case 'failed':
      return { kind: 'failed', error: stop.error };
    case 'cancelled':
    case 'frozen':
      return { kind: stop.kind };
    case 'interrupted':
      return { kind: 'interrupted', error: stop.error ?? null };
  }
}

/**
 * The .sql file of each todo: the held write's file for its todo, else a file of the job whose text is the
 * todo's SQL. `sqlFiles` maps job-relative paths (sql/NNN-slug.sql) to their text.
 */
export function todosView(detail: Pick<JobDetail, 'todos' | 'stop'>, sqlFiles: ReadonlyMap<string, string>): TodosView {
  if (!detail.todos.ok) return { ok: false, error: detail.todos.error };
  const byText = new Map<string, string>();
  for (const [path, text] of sqlFiles) byText.set(text.trim(), path);
  const held = detail.stop.kind === 'approval' ? detail.stop : undefined;
  const items = detail.todos.items.map((todo) => {
    const sql = todo.sql?.trim() ? todo.sql : null;
    const sqlFile =
      held && held.todoId === todo.id ? held.sqlFile : sql !== null ? (byText.get(sql.trim()) ?? null) : null;
    return { id: todo.id, title: todo.title, status: todo.status, sql, sqlFile, dependsOn: todo.depends_on ?? [] };
  });
  const count = (status: string) => items.filter((t) => t.status === status).length;
  return {
    ok: true,
    items,
    counts: {
      done: count('done'),
      skipped: count('skipped'),
      failed: count('failed'),
      inProgress: count('in_progress'),
      total: items.length,
    },
  };
}

export function chatView(
  entries: readonly ChatEntry[],
  pending: JobLocalState['pendingChat'],
  failed: JobLocalState['chatError'] = null,
): ChatView {
  const shown: ChatEntryView[] = entries.map((entry): ChatEntryView => {
    switch (entry.kind) {
      case 'user':
      case 'draft_feedback':
        return { kind: entry.kind, at: entry.at, text: entry.text };
      case 'assistant':
        return {
          kind: 'assistant',
          at: entry.at,
          text: entry.text,
          tools: entry.tools.map((t) => ({ name: t.name, ok: t.ok, summary: t.summary })),
        };
      case 'plan_edit':
        return {
          kind: 'plan_edit',
          at: entry.at,
          id: entry.id,
          summary: entry.summary,
          diff: entry.diff,
          status: entry.status,
        };
    }
  });
  // The draft of the latest turn: a draft after the person's last message.
  const lastUser = shown.map((e) => e.kind).lastIndexOf('user');
  const draft = shown
    .slice(lastUser + 1)
    .filter((e) => e.kind === 'draft_feedback')
    .at(-1);
  const edit = [...shown]
    .reverse()
    .find((e): e is Extract<ChatEntryView, { kind: 'plan_edit' }> => e.kind === 'plan_edit' && e.status === 'proposed');
  // The core may already have logged the message in flight: show it once.
  const logged =
    pending !== null &&
    shown.at(lastUser)?.kind === 'user' &&
    (shown[lastUser] as { text: string }).text === pending.text;
  return {
    entries: shown,
    pending: pending === null ? null : { text: logged ? '' : pending.text, reply: pending.reply },
    draftFeedback: draft?.kind === 'draft_feedback' ? draft.text : null,
    openPlanEdit: edit ? { id: edit.id, summary: edit.summary, diff: edit.diff } : null,
    error: failed,
  };
}

export function reviewWarning(stop: JobStop): string | null {
  if (stop.kind !== 'review' || !stop.overLimit) return null;
  return `This plan has been through ${stop.cycle} reviews, past the soft limit of ${stop.maxReviewCycles} (postgresAgent.planning.maxReviewCycles). More rounds rarely help now: consider running it as is.`;
}

export function toJobView(input: {
  detail: JobDetail;
  chat: readonly ChatEntry[];
  approval: ApprovalView | null;
  sqlFiles: ReadonlyMap<string, string>;
  local: JobLocalState;
}): JobView {
  const { detail, local } = input;
  const { job } = detail;
  return {
    id: job.id,
    title: job.title,
    status: job.status,
    phase: job.phase,
    reviewCycles: job.reviewCycles,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    connection: job.connection,
    stop: toStopView(detail.stop),
    busy: local.busy,
    workspaceMd: detail.workspaceMd,
    planMd: detail.planMd,
    todos: todosView(detail, input.sqlFiles),
    planChange: detail.planChange
      ? { fromCycle: detail.planChange.fromCycle, toCycle: detail.planChange.toCycle, diff: detail.planChange.diff }
      : null,
    approval: input.approval,
    chat: chatView(input.chat, local.pendingChat, local.chatError),
    usage: {
      calls: detail.usage.calls,
      inputTokens: detail.usage.inputTokens,
      outputTokens: detail.usage.outputTokens,
      costUsd: detail.usage.costUsd,
    },
    history: detail.history.map((h) => ({ oid: h.oid.slice(0, 7), message: h.message, at: h.time.toISOString() })),
    files: detail.files,
    reviewWarning: reviewWarning(detail.stop),
    error: local.error,
  };
}

/**
 * The job the status bar shows: the one this window runs a step of, else the selected job while it
 * waits for the person; undefined gives the bar back to the connection. Its words are the job list's
 * (`JobListItem.state`, from `jobStateText`): the panel and the bar never disagree about one job.
 */
export function statusBarJob(
  busy: Pick<JobListItem, 'id' | 'title' | 'state'> | undefined,
  selected: { item: Pick<JobListItem, 'id' | 'title' | 'state'>; stop: JobStopView['kind'] } | null,
): JobBarState | undefined {
  if (busy) return { jobId: busy.id, title: busy.title, state: busy.state };
  if (selected && (selected.stop === 'review' || selected.stop === 'approval'))
    return { jobId: selected.item.id, title: selected.item.title, state: selected.item.state };
  return undefined;
}

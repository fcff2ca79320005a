/**
 * The job cockpit's browser code (an editor panel per job): the plan with "changed since last review", the
 * todos, the held write's impact and the activity on the left, the review chat on the right, the actions
 * the job's state allows in a bar fixed at the bottom. Built from the side panel's job components; renders
 * the host's snapshots and sends intents back, holding only UI state (and its job id, for a reload).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import type { CockpitHostMessage, CockpitState } from '../../src/shared/cockpitProtocol';
import type { JobView } from '../../src/shared/protocol';
import { approvalCard } from '../common/approvalCard';
import { el, fmt } from '../common/dom';
import { actionBar } from './actionBar';
import { activityTab } from './tabs/activityTab';
import { chatTab } from './tabs/chatTab';
import { impactTab } from './tabs/impactTab';
import { jobHead } from './jobHead';
import { jobUi, onRedraw } from './jobUi';
import { planTab } from './tabs/planTab';
import { todosTab } from './tabs/todosTab';
import { memo, patchChildren } from '../common/patch';
import { post, saveUiState } from '../common/vscodeApi';
import { loadMarkdownRenderer } from './lazyMarkdown';
import { timelineView } from './timelineView';

const app = document.getElementById('app') as HTMLElement;
let lastVersion = 0;
let last: CockpitState | undefined;

window.addEventListener('message', (event: MessageEvent<CockpitHostMessage>) => {
  const message = event.data;
  if (message?.type !== 'cockpit' || message.version <= lastVersion) return;
  lastVersion = message.version;
  if (last?.jobId !== message.state.jobId) saveUiState({ jobId: message.state.jobId });
  last = message.state;
  render(message.state);
});
onRedraw(() => {
  if (last) render(last);
});
post({ type: 'ready' });
// marked + DOMPurify come after the first screen (plans and replies are plain text for that moment).
loadMarkdownRenderer();

function section(
  key: string,
  heading: string,
  testId: string,
  body: HTMLElement[],
  extra: Record<string, string> = {},
): HTMLElement {
  const id = `cockpit-${key}-heading`;
  return el(
    'section',
    { class: `cockpit-section cockpit-${key}`, 'aria-labelledby': id, 'data-testid': testId, ...extra },
    el('h3', { id }, heading),
    ...body,
  );
}

function todosHeading(job: JobView): string {
  if (!job.todos.ok) return 'Todos (unreadable)';
  const { done, skipped, total } = job.todos.counts;
  return `Todos ${fmt(done + skipped)}/${fmt(total)}`;
}

/** Every other write of the job (executed, rejected, …) with its impact, as a record: newest first. */
function earlierWrites(state: CockpitState, job: JobView): HTMLElement[] {
  const held = job.approval?.ticketId;
  const writes = state.writes.filter((w) => w.ticketId !== held);
  if (writes.length === 0) return [];
  return [
    el('h4', { class: 'earlier-writes' }, `Writes of this job (${fmt(writes.length)})`),
    el(
      'div',
      { class: 'job-writes', 'data-testid': 'job-writes' },
      ...writes.map((w) => approvalCard(w, { readOnly: true })),
    ),
  ];
}

/** The left column: the plan first; a write waiting for the person comes before it, where the eye lands. */
function leftColumn(state: CockpitState, job: JobView): HTMLElement[] {
  const pending = job.approval?.status === 'pending';
  const impact = memo('c-impact', { id: job.id, approval: job.approval, stop: job.stop, writes: state.writes }, () =>
    section(
      'impact',
      pending ? 'Impact — waiting for your approval' : 'Impact',
      'cockpit-impact',
      [impactTab(job), ...earlierWrites(state, job)],
      { 'data-pending': String(pending) },
    ),
  );
  const plan = memo(
    'c-plan',
    {
      id: job.id,
      plan: job.planMd,
      ws: job.workspaceMd,
      change: job.planChange,
      diff: jobUi.showPlanDiff,
      stop: job.stop,
      edit: job.chat.openPlanEdit,
      busy: job.busy !== null,
    },
    () => section('plan', 'Plan', 'cockpit-plan', [planTab(job)]),
  );
  const todos = memo('c-todos', { id: job.id, todos: job.todos }, () =>
    section('todos', todosHeading(job), 'cockpit-todos', [todosTab(job)]),
  );
  const activity = memo(
    'c-activity',
    {
      id: job.id,
      timeline: state.timeline,
      usage: job.usage,
      history: job.history,
      files: job.files,
      at: job.updatedAt,
      phase: job.phase,
      cycles: job.reviewCycles,
    },
    () => section('activity', 'Activity', 'cockpit-activity', [timelineView(state.timeline), activityTab(job)]),
  );
  return pending ? [impact, plan, todos, activity] : [plan, todos, impact, activity];
}

const left = el('div', { class: 'cockpit-left', tabindex: '-1' });
const right = el('aside', { class: 'cockpit-right', 'aria-labelledby': 'cockpit-chat-heading' });
const chatHeading = el('h3', { id: 'cockpit-chat-heading' }, 'Review chat');
const actions = el('footer', {
  class: 'cockpit-actions',
  'data-testid': 'cockpit-actions',
  'aria-label': 'Job actions',
});
const head = el('header', { class: 'cockpit-head' });
const body = el('div', { class: 'cockpit-body' }, left, right);
const root = el('div', { class: 'cockpit', 'data-testid': 'cockpit' }, head, body, actions);

function render(state: CockpitState): void {
  const job = state.job;
  root.setAttribute('data-job-id', state.jobId);
  if (job === null) {
    const error = state.error;
    patchChildren(app, [
      memo('c-loading', { error }, () =>
        error
          ? el(
              'p',
              { class: 'error-text', role: 'alert', 'data-testid': 'job-load-error' },
              error.advice ? `${error.message} ${error.advice}` : error.message,
            )
          : el('p', { class: 'muted' }, 'Reading the job…'),
      ),
    ]);
    return;
  }
  root.setAttribute('data-job-title', job.title);
  // A write of the job newly waiting: its impact is at the top of the left column; bring it into view once.
  const ticket = job.approval?.status === 'pending' ? job.approval.ticketId : null;
  if (ticket !== null && ticket !== jobUi.seenTicket) requestAnimationFrame(() => left.scrollTo({ top: 0 }));
  jobUi.seenTicket = ticket ?? jobUi.seenTicket;
  document.title = job.title;
  patchChildren(head, [
    memo(
      'c-head',
      { id: job.id, title: job.title, stop: job.stop, busy: job.busy, status: job.status, usage: job.usage },
      () => jobHead(job),
    ),
  ]);
  patchChildren(left, leftColumn(state, job));
  patchChildren(right, [chatHeading, ...chatTab(job)]);
  patchChildren(actions, actionBar(job));
  actions.hidden = actions.childElementCount === 0;
  patchChildren(app, [root]);
}

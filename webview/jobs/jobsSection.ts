/** The jobs part of the panel: the list, then the selected job with its tabs and action bar. */
import type { JobView, PanelState } from '../../src/shared/protocol';
import { el } from '../dom';
import { memo, patchChildren } from '../patch';
import { actionBar } from './actionBar';
import { activityTab, usageText } from './activityTab';
import { chatTab } from './chatTab';
import { impactTab } from './impactTab';
import { jobList } from './jobList';
import { tabBar } from './jobTabs';
import type { JobTab } from './jobUi';
import { jobUi } from './jobUi';
import { planTab } from './planTab';
import { todosTab } from './todosTab';

function stopText(job: JobView): string {
  if (job.busy) return job.busy.message;
  const s = job.stop;
  switch (s.kind) {
    case 'review':
      return `waiting for your review (cycle ${s.cycle})`;
    case 'approval':
      return 'waiting for your approval of a write';
    case 'completed':
      return s.summary.trim() === '' ? 'completed' : `completed — ${s.summary}`;
    case 'failed':
      return `failed — ${s.error.message}`;
    case 'cancelled':
      return 'cancelled';
    case 'frozen':
      return 'paused — Continue picks it up where it stopped';
    case 'interrupted':
      return s.error
        ? `stopped by an error: ${s.error.message} — Continue retries from its last checkpoint`
        : 'interrupted (a window reload or a cancelled step) — Continue picks it up from its last checkpoint';
  }
}

function head(job: JobView): HTMLElement {
  return el(
    'div',
    { class: 'job-head' },
    el('h2', { 'data-testid': 'job-title' }, job.title),
    el('p', { class: `job-state stop-${job.stop.kind}`, 'data-testid': 'job-state', 'data-stop': job.stop.kind, 'data-status': job.status, 'data-busy': String(job.busy !== null) }, stopText(job)),
    el('p', { class: 'muted usage' }, usageText(job.usage)),
  );
}

function tabContent(job: JobView, tab: JobTab): HTMLElement[] {
  switch (tab) {
    case 'plan':
      return [memo('tab-plan', { id: job.id, plan: job.planMd, ws: job.workspaceMd, change: job.planChange, diff: jobUi.showPlanDiff, stop: job.stop, edit: job.chat.openPlanEdit, busy: job.busy !== null }, () => planTab(job))];
    case 'todos':
      return [memo('tab-todos', { id: job.id, todos: job.todos }, () => todosTab(job))];
    case 'impact':
      return [memo('tab-impact', { id: job.id, approval: job.approval, stop: job.stop }, () => impactTab(job))];
    case 'chat':
      return chatTab(job);
    case 'activity':
      return [memo('tab-activity', { id: job.id, usage: job.usage, history: job.history, files: job.files, at: job.updatedAt, phase: job.phase, cycles: job.reviewCycles }, () => activityTab(job))];
  }
}

const detail = el('section', { class: 'job-detail', 'data-testid': 'job-detail', 'aria-label': 'Selected job' });
const tabPanel = el('div', { id: 'job-tabpanel', role: 'tabpanel', class: 'tabpanel', tabindex: '0' });
const separator = el('hr', { class: 'action-bar-sep' });

function jobDetail(job: JobView): HTMLElement {
  // A write of the job newly waiting: show its impact once (the person may switch away again).
  const ticket = job.approval?.status === 'pending' ? job.approval.ticketId : null;
  if (ticket !== null && ticket !== jobUi.seenTicket) jobUi.tab = 'impact';
  jobUi.seenTicket = ticket ?? jobUi.seenTicket;
  tabPanel.setAttribute('aria-labelledby', `job-tab-${jobUi.tab}`);
  tabPanel.setAttribute('data-tab', jobUi.tab);
  patchChildren(tabPanel, tabContent(job, jobUi.tab));
  patchChildren(detail, [
    memo('job-head', { id: job.id, title: job.title, stop: job.stop, busy: job.busy, status: job.status, usage: job.usage }, () => head(job)),
    memo('job-tabs', { id: job.id, todos: job.todos.ok ? job.todos.counts : null, approval: job.approval?.status ?? null, chat: job.chat.pending !== null, tab: jobUi.tab }, () => tabBar(job, jobUi.tab)),
    tabPanel,
    separator,
    ...actionBar(job),
  ]);
  detail.setAttribute('data-job-id', job.id);
  return detail;
}

export function jobsSection(state: PanelState): HTMLElement[] {
  const list = memo('job-list', { jobs: state.jobs, selected: state.selectedJobId }, () => jobList(state.jobs, state.selectedJobId));
  if (state.selectedJobId === null) return [list];
  if (state.job === null) {
    const error = state.jobError;
    return [
      list,
      memo('job-loading', { error, id: state.selectedJobId }, () =>
        error
          ? el('p', { class: 'error-text', role: 'alert', 'data-testid': 'job-load-error' }, error.advice ? `${error.message} ${error.advice}` : error.message)
          : el('p', { class: 'muted' }, 'Reading the job…'),
      ),
    ];
  }
  return [list, jobDetail(state.job)];
}

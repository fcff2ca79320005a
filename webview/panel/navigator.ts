/**
 * The side panel as a navigator (issue 15): everything waiting for a person (each opens where it is
 * decided) and the recent asks (each opens its result). Jobs are listed by jobs/jobList.ts.
 */
import { clock } from '../../src/shared/clock';
import type { AnswerStatus, RecentAskView, WaitingView } from '../../src/shared/protocol';
import { el } from '../common/dom';
import { post } from '../common/vscodeApi';

function whenBy(item: WaitingView): string {
  return `${item.createdBy} · ${clock(item.createdAt)}`;
}

function waitingItem(item: WaitingView): HTMLElement {
  const what =
    item.kind === 'plan'
      ? 'Plan'
      : item.statements !== undefined
        ? `Transaction · ${item.statements} statements`
        : 'Write';
  const label = [
    el('span', { class: `risk risk-${item.risk}` }, item.risk),
    el('span', { class: 'waiting-kind' }, what),
    el('span', { class: `waiting-title${item.kind === 'write' ? ' sql-text' : ''}` }, item.title),
    el('span', { class: 'muted waiting-by' }, whenBy(item)),
  ];
  const attrs = { 'data-testid': 'waiting-item', 'data-kind': item.kind, 'data-ticket-id': item.ticketId };
  // A job's plan or write is decided in its cockpit; a write of this window in its editor (CodeLens).
  if (item.jobId !== null || item.here) {
    const jobId = item.jobId;
    const open = el(
      'button',
      {
        type: 'button',
        class: 'nav-item',
        ...attrs,
        title: jobId !== null ? "Open the job's cockpit" : 'Open the write in its editor, with its CodeLens',
      },
      ...label,
    );
    open.addEventListener('click', () =>
      post(jobId !== null ? { type: 'selectJob', jobId } : { type: 'openSql', ticketId: item.ticketId }),
    );
    return el('li', {}, open);
  }
  // Someone else's (a terminal, a teammate, an agent elsewhere): decided where it was asked for.
  return el(
    'li',
    {},
    el(
      'div',
      { class: 'nav-item static', ...attrs },
      ...label,
      el(
        'code',
        { class: 'muted waiting-hint', title: 'Decide it from a terminal of this workspace' },
        `pg-agent approvals approve ${item.ticketId}`,
      ),
    ),
  );
}

export function waitingSection(waiting: readonly WaitingView[]): HTMLElement {
  return el(
    'section',
    { class: 'waiting', 'aria-labelledby': 'waiting-heading', 'data-testid': 'waiting' },
    el(
      'h2',
      { id: 'waiting-heading' },
      'Waiting for you ',
      el('span', { class: 'badge', 'data-testid': 'waiting-count' }, String(waiting.length)),
    ),
    el('ul', { class: 'nav-list' }, ...waiting.map(waitingItem)),
  );
}

const ASK_STATUS: Record<AnswerStatus, string> = {
  running: 'working…',
  answered: 'answered',
  held: 'write waiting',
  executed: 'executed',
  rejected: 'rejected',
  refused: 'refused',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function recentAsksSection(asks: readonly RecentAskView[]): HTMLElement {
  const items = asks.map((a) => {
    const open = el(
      'button',
      {
        type: 'button',
        class: 'nav-item',
        'data-testid': 'recent-ask',
        'data-thread-id': a.threadId,
        title: `Open the result of "${a.question}"`,
      },
      el('span', { class: 'waiting-title' }, a.question),
      el('span', { class: `badge ask-${a.status}` }, ASK_STATUS[a.status]),
      el('span', { class: 'muted waiting-by' }, clock(a.at)),
    );
    open.addEventListener('click', () => post({ type: 'openAsk', threadId: a.threadId }));
    return el('li', {}, open);
  });
  return el(
    'section',
    { class: 'recent-asks', 'aria-labelledby': 'recent-asks-heading', 'data-testid': 'recent-asks' },
    el('h2', { id: 'recent-asks-heading' }, 'Recent asks'),
    el('ul', { class: 'nav-list' }, ...items),
  );
}

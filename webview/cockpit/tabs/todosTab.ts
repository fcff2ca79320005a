/** Todos tab: ☐/◐/☑ per todo with its SQL (a link opens the job's .sql file) and a progress bar. */
import type { JobView, TodoView } from '../../../src/shared/protocol';
import { statementView } from '../../../src/shared/visibleSql';
import { el, fmt } from '../../common/dom';
import { post } from '../../common/vscodeApi';

const MARK: Record<TodoView['status'], string> = {
  pending: '☐',
  in_progress: '◐',
  done: '☑',
  skipped: '⤼',
  failed: '☒',
};
const SAID: Record<TodoView['status'], string> = {
  pending: 'to do',
  in_progress: 'in progress',
  done: 'done',
  skipped: 'skipped',
  failed: 'failed',
};

function openFile(jobId: string, path: string, label: string): HTMLElement {
  const link = el(
    'button',
    { type: 'button', class: 'link', 'data-testid': 'todo-sql-link', title: `Open ${path}` },
    label,
  );
  link.addEventListener('click', () => post({ type: 'openJobFile', jobId, path }));
  return link;
}

function todoSql(sql: string): HTMLElement[] {
  const { text, flag } = statementView(sql.trim());
  return [
    el('pre', { class: 'sql' }, text),
    ...(flag ? [el('p', { class: 'warning-text', 'data-testid': 'hidden-chars' }, flag.sentence)] : []),
  ];
}

export function todosTab(job: JobView): HTMLElement {
  const todos = job.todos;
  if (!todos.ok) {
    return el(
      'div',
      {},
      el('p', { class: 'error-text', role: 'alert' }, todos.error),
      el('div', { class: 'buttons' }, openFile(job.id, 'todos.yaml', 'Open todos.yaml')),
    );
  }
  if (todos.items.length === 0)
    return el('p', { class: 'muted' }, 'No todos yet: the plan lists them once the agent has explored the database.');
  const { done, skipped, failed, inProgress, total } = todos.counts;
  const finished = done + skipped;
  const percent = total === 0 ? 0 : Math.round((finished / total) * 100);
  const fill = el('span', { class: 'progress-fill' });
  fill.style.width = `${percent}%`;
  const progress = el(
    'div',
    {
      class: 'progress',
      role: 'progressbar',
      'aria-valuemin': '0',
      'aria-valuemax': String(total),
      'aria-valuenow': String(finished),
      'aria-label': 'Todos finished',
      'data-testid': 'todo-progress',
    },
    fill,
  );
  const summary = [
    `${fmt(finished)} of ${fmt(total)} finished`,
    inProgress ? `${fmt(inProgress)} in progress` : '',
    failed ? `${fmt(failed)} failed` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const items = todos.items.map((t) =>
    el(
      'li',
      { class: `todo status-${t.status}`, 'data-testid': 'todo-item', 'data-todo-id': t.id, 'data-status': t.status },
      el('span', { class: 'todo-mark', 'aria-label': SAID[t.status], role: 'img' }, MARK[t.status]),
      el(
        'div',
        { class: 'todo-body' },
        el('span', { class: 'todo-title' }, t.title),
        ...(t.dependsOn.length > 0 ? [el('span', { class: 'muted' }, ` after ${t.dependsOn.join(', ')}`)] : []),
        // A todo's SQL as it runs: hidden characters shown and flagged (its write is approved on the card).
        ...(t.sql !== null ? todoSql(t.sql) : []),
        ...(t.sqlFile !== null ? [openFile(job.id, t.sqlFile, t.sqlFile)] : []),
      ),
    ),
  );
  return el(
    'div',
    { class: 'todos-tab' },
    progress,
    el('p', { class: 'muted' }, summary),
    el('ul', { class: 'todos', 'aria-label': 'Todos' }, ...items),
  );
}

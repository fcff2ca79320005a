/**
 * The side panel's browser code, a navigator (issue 15): the connection, what waits for a person, the jobs
 * (each opens its cockpit), the recent asks, the latest answer, this window's writes and the tables.
 * Renders the snapshots the host pushes and sends intents back.
 * It holds no state of its own beyond the last version seen;
 * text is set with textContent, and model markdown goes through marked + DOMPurify (webview/common/markdown.ts).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import type { HostMessage, PanelAnswerView, PanelState, RowsSummary, TableSummary } from '../../src/shared/protocol';
import { statementView } from '../../src/shared/visibleSql';
import { approvalCard } from '../common/approvalCard';
import { button, commandButton, el, fmt } from '../common/dom';
import { showGettingStarted } from './gettingStarted';
import { jobList } from './jobList';
import { recentAsksSection, waitingSection } from './navigator';
import { memo, patchChildren } from '../common/patch';
import { post } from '../common/vscodeApi';

const app = document.getElementById('app') as HTMLElement;
let lastVersion = 0;

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  if (message?.type !== 'state' || message.version <= lastVersion) return;
  lastVersion = message.version;
  render(message.state);
});
post({ type: 'ready' });

/** Sections whose data did not change keep their DOM (focus, scroll, typed text); the rest is rebuilt. */
function render(state: PanelState): void {
  patchChildren(app, [
    memo('connection', state.connection, () => connectionSection(state)),
    ...(state.waiting.length > 0 ? [memo('waiting', state.waiting, () => waitingSection(state.waiting))] : []),
    memo('job-list', { jobs: state.jobs, selected: state.selectedJobId }, () =>
      jobList(state.jobs, state.selectedJobId),
    ),
    ...(state.recentAsks.length > 0
      ? [memo('recent-asks', state.recentAsks, () => recentAsksSection(state.recentAsks))]
      : []),
    ...(state.answer ? [memo('answer', state.answer, () => answerSection(state.answer as PanelAnswerView))] : []),
    ...state.approvals.map((a) => memo(`approval-${a.ticketId}`, a, () => approvalCard(a))),
    ...(state.results ? [memo('results', state.results, () => readSection(state.results as RowsSummary))] : []),
    ...(showGettingStarted(state) ? [memo('getting-started', null, gettingStarted)] : []),
    memo('schema', state.schema, () => schemaSection(state)),
  ]);
}

function connectionSection(state: PanelState): HTMLElement {
  const c = state.connection;
  const label = c.status === 'none' ? 'not connected' : c.label;
  const status =
    c.status === 'connecting'
      ? el('vscode-progress-ring', { class: 'inline-ring', 'aria-label': 'Connecting' })
      : c.status === 'failed'
        ? el('span', { class: 'status error' }, 'failed')
        : c.status === 'connected'
          ? el('span', { class: 'status ok', title: `database ${c.database}` }, c.database)
          : el('span', { class: 'status' });
  return el(
    'section',
    { class: 'connection' },
    el('span', { class: 'muted' }, 'Connection: '),
    el('strong', { 'data-testid': 'connection-label' }, label),
    status,
    commandButton('Change…', 'selectConnection', true),
  );
}

/** The three ways in (see showGettingStarted for when). */
function gettingStarted(): HTMLElement {
  return el(
    'section',
    { class: 'getting-started' },
    el(
      'p',
      {},
      'Ask about your PostgreSQL database in plain words. The agent plans, you review, and nothing writes until you approve the exact statement and its impact.',
    ),
    el(
      'div',
      { class: 'buttons' },
      commandButton('Open Sample Database', 'openSampleDatabase'),
      commandButton('Add Connection…', 'addConnection', true),
      commandButton('Set Gemini API Key…', 'setGeminiApiKey', true),
    ),
  );
}

function schemaSection(state: PanelState): HTMLElement {
  const s = state.schema;
  switch (s.status) {
    case 'idle':
      return el('section', { class: 'muted' }, 'Open a database to see its tables.');
    case 'loading':
      return el(
        'section',
        { class: 'loading' },
        el('vscode-progress-ring', { 'aria-label': 'Loading' }),
        ' Reading the schema… (the sample database is generated on first use)',
      );
    case 'failed':
      return el(
        'section',
        { class: 'error-box', role: 'alert', 'data-testid': 'schema-error' },
        el('p', {}, el('strong', {}, s.error.message)),
        ...(s.error.advice ? [el('p', {}, s.error.advice)] : []),
        el(
          'div',
          { class: 'buttons' },
          commandButton('Retry', 'refreshSchema'),
          commandButton('Select Connection…', 'selectConnection', true),
        ),
      );
    case 'ready': {
      const more = s.total - s.tables.length;
      const list = el(
        'ul',
        { class: 'tables', 'aria-label': 'Tables' },
        ...s.tables.map(tableItem),
        ...(more > 0 ? [moreTablesItem(more)] : []),
      );
      const section = el('vscode-collapsible', { heading: `Tables (${fmt(s.total)})`, open: '' }, list);
      const refresh = el('vscode-button', { slot: 'actions', secondary: '', title: 'Reload the schema' }, 'Refresh');
      refresh.addEventListener('click', () => post({ type: 'runCommand', command: 'refreshSchema' }));
      section.append(refresh);
      return section;
    }
  }
}

/** The tables past the panel's list: the Schema view pages through them, Find Table… goes to one by name. */
function moreTablesItem(more: number): HTMLElement {
  return el(
    'li',
    { class: 'muted', 'data-testid': 'more-tables' },
    `… and ${fmt(more)} more. `,
    commandButton('Find Table…', 'findTable', true),
  );
}

function tableItem(t: TableSummary): HTMLElement {
  const rows = t.rowEstimate === null ? '' : `~${t.rowEstimate.toLocaleString('en-US')} rows`;
  const item = el(
    'li',
    { 'data-testid': 'table-item', title: t.comment ?? '' },
    el('span', { class: 'table-name' }, t.schema === 'public' ? t.name : `${t.schema}.${t.name}`),
    ...(t.kind === 'table' ? [] : [el('vscode-badge', { variant: 'tag' }, t.kind.replace('_', ' '))]),
    el('span', { class: 'muted right' }, [rows, `${t.columnCount} cols`].filter(Boolean).join(' · ')),
  );
  return item;
}

/** "100 rows · 3 columns · 12 ms": a result's size; its rows are in the Results view (editor area). */
function rowsLine(r: RowsSummary): string {
  return `${fmt(r.rowCount)} row${r.rowCount === 1 ? '' : 's'}${r.truncated ? ' (row cap reached)' : ''} · ${fmt(r.columns)} column${r.columns === 1 ? '' : 's'} · ${fmt(r.elapsedMs)} ms`;
}

function rowsSection(r: RowsSummary, show: () => void): HTMLElement {
  return el(
    'div',
    { class: 'rows-summary', 'data-testid': 'rows-summary' },
    el('span', { class: 'muted', 'data-testid': 'rows-count' }, rowsLine(r)),
    button('Show rows', 'show-rows-button', show, true),
  );
}

/** SQL as it runs: hidden characters shown as stand-ins, and flagged when there are any. */
function sqlBlock(sql: string, testId?: string): HTMLElement[] {
  const { text, flag } = statementView(sql.trim());
  return [
    el('pre', { class: 'sql', ...(testId ? { 'data-testid': testId } : {}) }, text),
    ...(flag ? [el('p', { class: 'warning-text', 'data-testid': 'hidden-chars' }, flag.sentence)] : []),
  ];
}

/** The latest read of Run SQL with Review: its SQL and size (the rows opened in the Results view). */
function readSection(r: RowsSummary): HTMLElement {
  return el(
    'section',
    { class: 'results-section', 'data-testid': 'read' },
    ...sqlBlock(r.sql),
    rowsSection(r, () => post({ type: 'runCommand', command: 'showResults' })),
  );
}

const ANSWER_STATUS_TEXT: Record<PanelAnswerView['status'], string> = {
  running: 'working on it…',
  answered: 'answered',
  held: 'write waiting for your approval in the editor',
  executed: 'executed',
  rejected: 'rejected — nothing ran',
  refused: 'refused',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** UX "Ask": the question, the SQL (copy / open in editor), how many rows (shown in the Results view), the summary, tokens and cost. */
function answerSection(a: PanelAnswerView): HTMLElement {
  const u = a.usage;
  const cost = u.costUsd === null ? 'cost unknown' : `~$${u.costUsd.toFixed(4)}`;
  const usage = `${fmt(u.calls)} model call${u.calls === 1 ? '' : 's'} · ${fmt(u.inputTokens)} in / ${fmt(u.outputTokens)} out tokens · ${cost}`;
  return el(
    'section',
    { class: `answer status-${a.status}`, 'data-testid': 'answer', 'data-status': a.status },
    el(
      'div',
      { class: 'answer-head' },
      el('strong', { 'data-testid': 'answer-question' }, a.question),
      el('span', { class: 'muted', 'data-testid': 'answer-status' }, ANSWER_STATUS_TEXT[a.status]),
    ),
    ...(a.status === 'running' ? [el('vscode-progress-ring', { class: 'inline-ring', 'aria-label': 'Working' })] : []),
    ...(a.sql === null
      ? []
      : [
          ...sqlBlock(a.sql, 'answer-sql'),
          el(
            'div',
            { class: 'buttons' },
            button('Copy', 'copy-sql-button', () => post({ type: 'runCommand', command: 'copyAnswerSql' }), true),
            button(
              'Open in editor',
              'open-answer-sql-button',
              () => post({ type: 'runCommand', command: 'openAnswerSql' }),
              true,
            ),
          ),
        ]),
    ...(a.results ? [rowsSection(a.results, () => post({ type: 'openAsk', threadId: a.threadId }))] : []),
    ...(a.summary ? [el('p', { class: 'summary', 'data-testid': 'answer-summary' }, a.summary)] : []),
    ...(a.executedRows === null
      ? []
      : [el('p', { 'data-testid': 'answer-executed' }, `Executed: ${fmt(a.executedRows)} rows changed.`)]),
    ...(a.error
      ? [
          el(
            'p',
            { class: 'error-text', role: 'alert', 'data-testid': 'answer-error' },
            a.error.advice ? `${a.error.message} ${a.error.advice}` : a.error.message,
          ),
        ]
      : []),
    el('p', { class: 'muted usage', 'data-testid': 'answer-usage' }, usage),
  );
}

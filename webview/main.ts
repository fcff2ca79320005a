/**
 * The review panel's browser code: renders the snapshots the host pushes and sends intents back.
 * It holds no state of its own beyond the last snapshot and UI choices (open tab, text being typed);
 * text is set with textContent, and model markdown goes through marked + DOMPurify (webview/jobs/markdown.ts).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import type { AnswerView, HostMessage, PanelCommand, PanelState, ResultsView, TableSummary } from '../src/shared/protocol';
import { approvalCard } from './approvalCard';
import { button, commandButton, el, fmt } from './dom';
import { showGettingStarted } from './gettingStarted';
import { jobsSection } from './jobs/jobsSection';
import { onRedraw } from './jobs/jobUi';
import { memo, patchChildren } from './patch';
import { post } from './vscodeApi';

const app = document.getElementById('app') as HTMLElement;
let lastVersion = 0;
let last: PanelState | undefined;

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  if (message?.type !== 'state' || message.version <= lastVersion) return;
  lastVersion = message.version;
  last = message.state;
  render(message.state);
});
onRedraw(() => {
  if (last) render(last);
});
post({ type: 'ready' });

/** Sections whose data did not change keep their DOM (focus, scroll, typed text); the rest is rebuilt. */
function render(state: PanelState): void {
  // The selected job's write is drawn in its Impact tab, not twice.
  const jobTicket = state.job?.approval?.ticketId;
  patchChildren(app, [
    memo('connection', state.connection, () => connectionSection(state)),
    ...jobsSection(state),
    ...(state.answer ? [memo('answer', state.answer, () => answerSection(state.answer as AnswerView))] : []),
    ...state.approvals.filter((a) => a.ticketId !== jobTicket).map((a) => memo(`approval-${a.ticketId}`, a, () => approvalCard(a))),
    ...(state.results ? [memo('results', state.results, () => resultsSection(state.results as ResultsView, 'exportResultsCsv'))] : []),
    ...(showGettingStarted(state) ? [memo('getting-started', null, gettingStarted)] : []),
    memo('schema', state.schema, () => schemaSection(state)),
  ]);
}

function connectionSection(state: PanelState): HTMLElement {
  const c = state.connection;
  const label = c.status === 'none' ? 'not connected' : c.label;
  const status =
    c.status === 'connecting' ? el('vscode-progress-ring', { class: 'inline-ring', 'aria-label': 'Connecting' })
    : c.status === 'failed' ? el('span', { class: 'status error' }, 'failed')
    : c.status === 'connected' ? el('span', { class: 'status ok', title: `database ${c.database}` }, c.database)
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
    el('p', {}, 'Ask about your PostgreSQL database in plain words. The agent plans, you review, and nothing writes until you approve the exact statement and its impact.'),
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
      return el('section', { class: 'loading' }, el('vscode-progress-ring', { 'aria-label': 'Loading' }), ' Reading the schema… (the sample database is generated on first use)');
    case 'failed':
      return el(
        'section',
        { class: 'error-box', role: 'alert', 'data-testid': 'schema-error' },
        el('p', {}, el('strong', {}, s.error.message)),
        ...(s.error.advice ? [el('p', {}, s.error.advice)] : []),
        el('div', { class: 'buttons' }, commandButton('Retry', 'refreshSchema'), commandButton('Select Connection…', 'selectConnection', true)),
      );
    case 'ready': {
      const list = el('ul', { class: 'tables', 'aria-label': 'Tables' }, ...s.tables.map(tableItem));
      const section = el('vscode-collapsible', { heading: `Tables (${s.tables.length})`, open: '' }, list);
      const refresh = el('vscode-button', { slot: 'actions', secondary: '', title: 'Reload the schema' }, 'Refresh');
      refresh.addEventListener('click', () => post({ type: 'runCommand', command: 'refreshSchema' }));
      section.append(refresh);
      return section;
    }
  }
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

/** Fixed row height (media/panel.css) lets the grid draw only the rows in view: 10,000 rows stay smooth. */
const ROW_HEIGHT_PX = 22;
const ROWS_DRAWN = 80;
const ROWS_ABOVE = 20;

function resultsSection(r: ResultsView, exportCommand: PanelCommand, showSql = true): HTMLElement {
  return el(
    'section',
    { class: 'results-section' },
    el('p', { class: 'muted' }, `${fmt(r.rowCount)} row${r.rowCount === 1 ? '' : 's'}${r.truncated ? ' (row cap reached)' : ''} · ${fmt(r.elapsedMs)} ms`),
    ...(showSql ? [el('pre', { class: 'sql' }, r.sql.trim())] : []),
    resultsGrid(r),
    el('div', { class: 'buttons' }, button('Export CSV', 'export-csv-button', () => post({ type: 'runCommand', command: exportCommand }), true)),
  );
}

function resultsGrid(r: ResultsView): HTMLElement {
  const cell = (v: unknown) => (v === null ? 'NULL' : typeof v === 'string' ? v : JSON.stringify(v));
  const row = (values: unknown[]) => el('tr', {}, ...values.map((v) => el('td', { class: v === null ? 'null' : '', title: cell(v) }, cell(v))));
  const spacer = (rows: number) => {
    const tr = el('tr', { class: 'spacer', 'aria-hidden': 'true' });
    tr.style.height = `${rows * ROW_HEIGHT_PX}px`;
    return tr;
  };
  const body = el('tbody');
  const table = el(
    'table',
    { class: 'results', 'data-testid': 'results-table', 'aria-rowcount': String(r.rows.length + 1) },
    el('thead', {}, el('tr', {}, ...r.fields.map((f) => el('th', { title: f.type }, f.name)))),
    body,
  );
  const scroll = el('div', { class: 'results-scroll', tabindex: '0', role: 'region', 'aria-label': 'Results' }, table);
  let drawnFrom = -1;
  const draw = () => {
    const from = Math.max(0, Math.floor(scroll.scrollTop / ROW_HEIGHT_PX) - ROWS_ABOVE);
    if (from === drawnFrom) return;
    drawnFrom = from;
    const to = Math.min(r.rows.length, from + ROWS_DRAWN);
    body.replaceChildren(
      ...(from > 0 ? [spacer(from)] : []),
      ...r.rows.slice(from, to).map(row),
      ...(to < r.rows.length ? [spacer(r.rows.length - to)] : []),
    );
  };
  scroll.addEventListener('scroll', () => requestAnimationFrame(draw));
  draw();
  return scroll;
}

const ANSWER_STATUS_TEXT: Record<AnswerView['status'], string> = {
  running: 'working on it…',
  answered: 'answered',
  held: 'write waiting for your approval in the editor',
  executed: 'executed',
  rejected: 'rejected — nothing ran',
  refused: 'refused',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** UX "Ask": the question, the SQL (copy / open in editor), the rows, the summary, tokens and cost. */
function answerSection(a: AnswerView): HTMLElement {
  const u = a.usage;
  const cost = u.costUsd === null ? 'cost unknown' : `~$${u.costUsd.toFixed(4)}`;
  const usage = `${fmt(u.calls)} model call${u.calls === 1 ? '' : 's'} · ${fmt(u.inputTokens)} in / ${fmt(u.outputTokens)} out tokens · ${cost}`;
  return el(
    'section',
    { class: `answer status-${a.status}`, 'data-testid': 'answer', 'data-status': a.status },
    el('div', { class: 'answer-head' }, el('strong', { 'data-testid': 'answer-question' }, a.question), el('span', { class: 'muted', 'data-testid': 'answer-status' }, ANSWER_STATUS_TEXT[a.status])),
    ...(a.status === 'running' ? [el('vscode-progress-ring', { class: 'inline-ring', 'aria-label': 'Working' })] : []),
    ...(a.sql === null
      ? []
      : [
          el('pre', { class: 'sql', 'data-testid': 'answer-sql' }, a.sql.trim()),
          el(
            'div',
            { class: 'buttons' },
            button('Copy', 'copy-sql-button', () => post({ type: 'runCommand', command: 'copyAnswerSql' }), true),
            button('Open in editor', 'open-answer-sql-button', () => post({ type: 'runCommand', command: 'openAnswerSql' }), true),
          ),
        ]),
    ...(a.results ? [resultsSection(a.results, 'exportAnswerCsv', false)] : []),
    ...(a.summary ? [el('p', { class: 'summary', 'data-testid': 'answer-summary' }, a.summary)] : []),
    ...(a.executedRows === null ? [] : [el('p', { 'data-testid': 'answer-executed' }, `Executed: ${fmt(a.executedRows)} rows changed.`)]),
    ...(a.error ? [el('p', { class: 'error-text', role: 'alert', 'data-testid': 'answer-error' }, a.error.advice ? `${a.error.message} ${a.error.advice}` : a.error.message)] : []),
    el('p', { class: 'muted usage', 'data-testid': 'answer-usage' }, usage),
  );
}

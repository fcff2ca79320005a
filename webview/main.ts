/**
 * The review panel's browser code: renders the snapshots the host pushes and sends intents back.
 * It holds no state of its own beyond the last snapshot; text is set with textContent, never as HTML.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import { clock } from '../src/shared/clock';
import type { AnswerView, ApprovalView, HostMessage, PanelCommand, PanelState, ResultsView, TableSummary, WebviewMessage } from '../src/shared/protocol';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const app = document.getElementById('app') as HTMLElement;
let lastVersion = 0;

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  if (message?.type !== 'state' || message.version <= lastVersion) return;
  lastVersion = message.version;
  render(message.state);
});
vscode.postMessage({ type: 'ready' });

function el(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function commandButton(label: string, command: PanelCommand, secondary = false): HTMLElement {
  const button = el('vscode-button', secondary ? { secondary: '' } : {}, label);
  button.addEventListener('click', () => vscode.postMessage({ type: 'runCommand', command }));
  return button;
}

function render(state: PanelState): void {
  app.replaceChildren(
    connectionSection(state),
    ...(state.answer ? [answerSection(state.answer)] : []),
    ...state.approvals.map(approvalCard),
    ...(state.results ? [resultsSection(state.results, 'exportResultsCsv')] : []),
    ...gettingStarted(state),
    schemaSection(state),
  );
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

/** UX "first minute": the three ways in, until the user has a connection and a key. */
function gettingStarted(state: PanelState): HTMLElement[] {
  if (state.hasProfiles && state.hasApiKey) return [];
  return [
    el(
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
    ),
  ];
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
      refresh.addEventListener('click', () => vscode.postMessage({ type: 'runCommand', command: 'refreshSchema' }));
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

const STATUS_TEXT: Record<ApprovalView['status'], string> = {
  pending: 'waiting for your approval',
  stale: 'SQL changed — re-checking the impact',
  running: 'running…',
  executed: 'executed',
  rejected: 'rejected — nothing ran',
  failed: 'failed — rolled back',
};

function button(label: string, testId: string, onClick: () => void, secondary = false): HTMLElement {
  const b = el('vscode-button', { 'data-testid': testId, ...(secondary ? { secondary: '' } : {}) }, label);
  b.addEventListener('click', onClick);
  return b;
}

/** UX "Impact" view: risk, rows per table as bars (direct/cascade/trigger), the SQL, the decision. */
function approvalCard(a: ApprovalView): HTMLElement {
  const i = a.impact;
  const max = Math.max(1, ...i.tables.map((t) => t.inserted + t.updated + t.deleted));
  const bars = el(
    'div',
    { class: 'bars', role: 'table', 'aria-label': 'Rows changed per table' },
    ...i.tables.map((t) => {
      const total = t.inserted + t.updated + t.deleted;
      const what = [t.deleted ? `${fmt(t.deleted)} deleted` : '', t.updated ? `${fmt(t.updated)} updated` : '', t.inserted ? `${fmt(t.inserted)} inserted` : ''].filter(Boolean).join(', ');
      const bar = el('span', { class: `bar via-${t.via}` });
      bar.style.width = `${Math.max(2, Math.round((total / max) * 100))}%`;
      return el(
        'div',
        { class: 'bar-row', role: 'row', 'data-testid': 'impact-row' },
        el('span', { class: 'table-name', role: 'cell' }, t.name),
        el('span', { class: 'muted', role: 'cell' }, `${what} (${t.via})`),
        el('span', { class: 'bar-track', role: 'cell' }, bar),
      );
    }),
  );
  const facts = [
    `planner estimate ${i.estimatedRows === null ? 'n/a' : fmt(i.estimatedRows)} (statement's own rows)`,
    `exact ${i.exactRows === null ? 'not previewed' : `${fmt(i.exactRows)} in ${i.tables.length} table${i.tables.length === 1 ? '' : 's'}`}`,
    `preview ${fmt(i.previewMs)} ms`,
  ].join(' · ');
  const actions: HTMLElement[] = [];
  if (a.status === 'pending') {
    actions.push(
      button('Approve & run', 'approve-button', () => vscode.postMessage({ type: 'decide', ticketId: a.ticketId, approve: true })),
      button('Reject', 'reject-button', () => vscode.postMessage({ type: 'decide', ticketId: a.ticketId, approve: false }), true),
    );
  }
  actions.push(button('Open SQL', 'open-sql-button', () => vscode.postMessage({ type: 'openSql', ticketId: a.ticketId }), true));
  if (a.executed) actions.push(button('Undo script', 'undo-button', () => vscode.postMessage({ type: 'openUndo', ticketId: a.ticketId }), true));
  return el(
    'section',
    { class: `approval status-${a.status}`, 'data-testid': 'approval-card', 'data-status': a.status },
    el('div', { class: 'approval-head' }, el('span', { class: `risk risk-${i.risk}`, 'data-testid': 'risk-badge' }, i.risk), el('span', {}, STATUS_TEXT[a.status])),
    el('pre', { class: 'sql' }, a.sql.trim()),
    bars,
    el('p', { class: 'muted' }, facts),
    ...i.foreignKeyActions.map((f) => el('p', { class: 'muted' }, `foreign key ${f.constraint}: ${f.action} → ${f.table}`)),
    ...i.triggers.map((t) => el('p', { class: 'muted' }, `trigger ${t.name} on ${t.table}`)),
    ...(i.wouldFail ? [el('p', { class: 'error-text' }, `Would fail: ${i.wouldFail.message} (${i.wouldFail.code})`)] : []),
    ...i.warnings.map((w) => el('p', { class: 'warning-text' }, w)),
    ...(a.executed ? [el('p', {}, `Executed ${clock(a.executed.at)} · ${fmt(a.executed.rows)} rows`)] : []),
    ...(a.error ? [el('p', { class: 'error-text' }, a.error.message)] : []),
    el('div', { class: 'buttons' }, ...actions),
  );
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
    el('div', { class: 'buttons' }, button('Export CSV', 'export-csv-button', () => vscode.postMessage({ type: 'runCommand', command: exportCommand }), true)),
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
            button('Copy', 'copy-sql-button', () => vscode.postMessage({ type: 'runCommand', command: 'copyAnswerSql' }), true),
            button('Open in editor', 'open-answer-sql-button', () => vscode.postMessage({ type: 'runCommand', command: 'openAnswerSql' }), true),
          ),
        ]),
    ...(a.results ? [resultsSection(a.results, 'exportAnswerCsv', false)] : []),
    ...(a.summary ? [el('p', { class: 'summary', 'data-testid': 'answer-summary' }, a.summary)] : []),
    ...(a.executedRows === null ? [] : [el('p', { 'data-testid': 'answer-executed' }, `Executed: ${fmt(a.executedRows)} rows changed.`)]),
    ...(a.error ? [el('p', { class: 'error-text', role: 'alert', 'data-testid': 'answer-error' }, a.error.advice ? `${a.error.message} ${a.error.advice}` : a.error.message)] : []),
    el('p', { class: 'muted usage', 'data-testid': 'answer-usage' }, usage),
  );
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

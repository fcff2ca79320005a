/**
 * The review panel's browser code: renders the snapshots the host pushes and sends intents back.
 * It holds no state of its own beyond the last snapshot; text is set with textContent, never as HTML.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import type { HostMessage, PanelCommand, PanelState, TableSummary, WebviewMessage } from '../src/shared/protocol';

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
  app.replaceChildren(connectionSection(state), ...gettingStarted(state), schemaSection(state));
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

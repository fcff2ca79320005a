/**
 * The collaborative planning session view: renders the snapshots the host pushes (rounds as a timeline with
 * the convergence chart, analyses side by side, cross-verification, options, questions, IMPL_PLAN.md) and
 * sends the person's decisions back. Model text is set as text; IMPL_PLAN.md goes through marked + DOMPurify.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import type {
  CollabHostMessage,
  CollabSessionView,
  CollabViewState,
  CollabWebviewMessage,
} from '../../src/shared/collabProtocol';
import { MAX_COLLAB_TEXT } from '../../src/shared/collabProtocol';
import { markdownBlock, useMarkdownRenderer } from '../common/markdown';
import { renderMarkdown } from '../common/markdownRenderer';
import { button, el, fmt, usd } from '../common/dom';
import { poster } from '../common/vscodeApi';
import { optionCards } from './optionsView';
import { convergenceChart, roundDetails } from './roundView';

// The planning session renders markdown from its first paint (its bundle carries the renderer).
useMarkdownRenderer(renderMarkdown);

const post = poster<CollabWebviewMessage>();

const app = document.getElementById('app') as HTMLElement;
let lastVersion = 0;
let last: CollabViewState | undefined;
/** The round shown below the chart (the latest unless the person picked another). */
let selectedRound: number | null = null;
/** Text being typed survives the re-renders a running step causes. */
const drafts: Record<string, string> = {};

window.addEventListener('message', (event: MessageEvent<CollabHostMessage>) => {
  const message = event.data;
  if (message?.type !== 'state' || message.version <= lastVersion) return;
  lastVersion = message.version;
  last = message.state;
  render(message.state);
});
post({ type: 'ready' });

function render(state: CollabViewState): void {
  const s = state.session;
  const parts: (HTMLElement | null)[] = [
    state.busy
      ? el('div', { class: 'busy', 'data-testid': 'busy', role: 'status' }, el('vscode-progress-ring', {}), state.busy)
      : null,
    state.error ? el('div', { class: 'error', 'data-testid': 'error', role: 'alert' }, state.error) : null,
  ];
  if (!s) {
    parts.push(
      el(
        'p',
        { class: 'muted' },
        state.busy
          ? 'Gathering the database context…'
          : 'No session open. Run "Postgres Agent: Plan with Several Models…".',
      ),
    );
    app.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
    return;
  }
  const busy = state.busy !== null;
  parts.push(header(s));
  if (s.asked) parts.push(el('div', { class: 'asked', 'data-testid': 'asked' }, `Waiting for ${s.asked}`));
  if (s.implPlan !== null) parts.push(planSection(s, busy));
  if (s.rounds.length > 0) {
    const latest = s.rounds[s.rounds.length - 1];
    const shown = s.rounds.find((r) => r.round === selectedRound) ?? latest;
    parts.push(
      el('h2', {}, 'Rounds'),
      convergenceChart(s.rounds, shown?.round ?? 0, (round) => {
        selectedRound = round;
        if (last) render(last);
      }),
    );
    if (latest) {
      const canChoose = !busy && (s.phase === 'awaiting-decision' || s.phase === 'planned');
      parts.push(
        el('h2', {}, `Options (round ${latest.round})`),
        optionCards(
          latest.solutions,
          canChoose ? (option) => post({ type: 'chooseOption', sessionId: s.id, option }) : null,
          s.selectedOption,
        ),
      );
      if (latest.questions.length > 0 || s.phase === 'awaiting-decision' || s.phase === 'planned')
        parts.push(decisions(s, latest.questions, busy));
    }
    if (shown) parts.push(roundDetails(shown));
  }
  parts.push(history(s));
  app.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
}

function header(s: CollabSessionView): HTMLElement {
  const sameModel = s.models.length === 1;
  return el(
    'header',
    { class: 'session-header' },
    el('h1', { 'data-testid': 'session-task' }, s.task.split('\n')[0] ?? s.task),
    s.direction ? el('p', {}, `Direction: ${s.direction}`) : null,
    el(
      'p',
      { class: 'muted', 'data-testid': 'session-meta' },
      `${s.id} · ${s.phase} · models: ${s.models.join(', ')}${sameModel ? ' (two perspectives of the same model)' : ''} · up to ${s.maxRounds} rounds per decision`,
    ),
    el(
      'p',
      { class: 'muted', 'data-testid': 'session-usage' },
      `Usage: ${fmt(s.usage.total.calls)} calls, ${fmt(s.usage.total.inputTokens)} / ${fmt(s.usage.total.outputTokens)} tokens, ${usd(s.usage.total.costUsd)}` +
        (s.usage.byModel.length > 1
          ? ` — ${s.usage.byModel.map((m) => `${m.model}: ${m.calls} calls, ${usd(m.costUsd)}`).join('; ')}`
          : ''),
    ),
    s.lastError ? el('p', { class: 'error' }, `Last step failed: ${s.lastError}`) : null,
  );
}

/** The questions with answer fields, and the other decisions (new direction, more analysis). */
function decisions(s: CollabSessionView, questions: readonly string[], busy: boolean): HTMLElement {
  const field = (key: string, label: string, testId: string) => {
    const area = el('textarea', {
      'data-testid': testId,
      rows: '3',
      maxlength: String(MAX_COLLAB_TEXT),
      'aria-label': label,
      placeholder: label,
    }) as HTMLTextAreaElement;
    area.value = drafts[key] ?? '';
    area.addEventListener('input', () => {
      drafts[key] = area.value;
    });
    return area;
  };
  const answers = questions.map((q, i) => ({ q, area: field(`answer-${s.id}-${i}`, q, `answer-${i + 1}`) }));
  const extra = field(
    `clarify-${s.id}`,
    questions.length > 0 ? 'Anything else (constraints, scope)…' : 'Your answer, constraints or scope…',
    'clarify-text',
  );
  const direction = field(`redirect-${s.id}`, 'A different direction…', 'redirect-text');
  const sendClarification = () => {
    const text = [
      ...answers.filter((a) => a.area.value.trim() !== '').map((a) => `Q: ${a.q}\nA: ${a.area.value.trim()}`),
      extra.value.trim(),
    ]
      .filter((t) => t !== '')
      .join('\n\n');
    if (text === '') return;
    for (const key of Object.keys(drafts))
      if (key.startsWith(`answer-${s.id}`) || key === `clarify-${s.id}`) delete drafts[key];
    post({ type: 'clarify', sessionId: s.id, text: text.slice(0, MAX_COLLAB_TEXT) });
  };
  return el(
    'section',
    { class: 'decisions', 'data-testid': 'decisions' },
    el('h2', {}, questions.length > 0 ? 'Questions' : 'Clarify'),
    ...answers.map(({ q, area }) => el('label', { class: 'question' }, el('span', {}, q), area)),
    extra,
    el(
      'div',
      { class: 'buttons' },
      button('Answer and analyse again', 'send-clarification', sendClarification, false, busy ? { disabled: '' } : {}),
      button(
        'More analysis',
        'more-analysis',
        () => post({ type: 'more', sessionId: s.id }),
        true,
        busy ? { disabled: '' } : {},
      ),
    ),
    el('h3', {}, 'Change direction'),
    direction,
    el(
      'div',
      { class: 'buttons' },
      button(
        'Start over in this direction',
        'send-redirect',
        () => {
          const text = direction.value.trim();
          if (text === '') return;
          delete drafts[`redirect-${s.id}`];
          post({ type: 'redirect', sessionId: s.id, text });
        },
        true,
        busy ? { disabled: '' } : {},
      ),
    ),
  );
}

function planSection(s: CollabSessionView, busy: boolean): HTMLElement {
  return el(
    'section',
    { class: 'plan', 'data-testid': 'impl-plan' },
    el('h2', {}, `Plan (option ${s.selectedOption ?? '?'})`),
    el(
      'div',
      { class: 'buttons' },
      s.jobId
        ? button(`Open job ${s.jobId}`, 'open-job', () => post({ type: 'openJob', jobId: s.jobId ?? '' }))
        : button(
            'Execute as job',
            'execute-as-job',
            () => post({ type: 'execute', sessionId: s.id }),
            false,
            busy || s.phase !== 'planned' ? { disabled: '' } : {},
          ),
    ),
    el(
      'p',
      { class: 'muted' },
      s.jobId
        ? 'The job waits at its plan review; every write needs its own approval.'
        : 'The job will wait at its plan review; every write still needs its own approval.',
    ),
    markdownBlock(s.implPlan ?? '', { 'data-testid': 'impl-plan-markdown' }),
  );
}

function history(s: CollabSessionView): HTMLElement {
  return el(
    'section',
    { class: 'history' },
    el('h2', {}, 'Decisions'),
    s.decisions.length === 0
      ? el('p', { class: 'muted' }, 'None yet.')
      : el(
          'ul',
          { 'data-testid': 'decision-history' },
          ...s.decisions.map((d) =>
            el('li', {}, `${d.at} ${d.by}: ${d.kind}${d.option ? ` ${d.option}` : ''}${d.text ? ` — ${d.text}` : ''}`),
          ),
        ),
  );
}

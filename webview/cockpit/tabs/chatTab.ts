/**
 * Chat tab: the review chat. Replies are markdown (sanitized), the reply in flight streams in, tool
 * calls are folded into one line each, drafted feedback can go to the feedback box, and plan edits show
 * as a diff with Apply / Discard.
 */
import { clock } from '../../../src/shared/clock';
import type { ChatEntryView, JobView } from '../../../src/shared/protocol';
import { MAX_MESSAGE_CHARS } from '../../../src/shared/limits';
import { button, el } from '../../common/dom';
import { memo } from '../../common/patch';
import { post } from '../../common/vscodeApi';
import { useAsFeedback } from '../actionBar';
import { diffView } from './diffView';
import { jobUi } from '../jobUi';
import { markdownBlock } from '../../common/markdown';

function tools(entry: Extract<ChatEntryView, { kind: 'assistant' }>): HTMLElement[] {
  if (entry.tools.length === 0) return [];
  return [
    el(
      'details',
      { class: 'chat-tools', 'data-testid': 'chat-tools' },
      el(
        'summary',
        {},
        `${entry.tools.length} tool call${entry.tools.length === 1 ? '' : 's'}: ${entry.tools.map((t) => t.name).join(', ')}`,
      ),
      el(
        'ul',
        {},
        ...entry.tools.map((t) => el('li', { class: t.ok ? '' : 'error-text' }, `${t.ok ? '✓' : '✗'} ${t.summary}`)),
      ),
    ),
  ];
}

function entryView(job: JobView, entry: ChatEntryView, atReview: boolean): HTMLElement {
  switch (entry.kind) {
    case 'user':
      return el(
        'div',
        { class: 'chat-msg user', 'data-testid': 'chat-user' },
        el('span', { class: 'chat-who' }, `You · ${clock(entry.at)}`),
        el('p', {}, entry.text),
      );
    case 'assistant':
      return el(
        'div',
        { class: 'chat-msg assistant', 'data-testid': 'chat-reply' },
        el('span', { class: 'chat-who' }, `Review chat · ${clock(entry.at)}`),
        ...tools(entry),
        markdownBlock(entry.text),
      );
    case 'draft_feedback':
      return el(
        'div',
        { class: 'chat-msg draft', 'data-testid': 'chat-draft' },
        el('span', { class: 'chat-who' }, 'Drafted feedback'),
        el('p', {}, entry.text),
        ...(atReview
          ? [
              el(
                'div',
                { class: 'buttons' },
                button('Use as feedback', 'use-as-feedback-button', () => useAsFeedback(job.id, entry.text), true),
              ),
            ]
          : []),
      );
    case 'plan_edit':
      return el(
        'div',
        {
          class: `chat-msg plan-edit status-${entry.status}`,
          'data-testid': 'chat-plan-edit',
          'data-status': entry.status,
        },
        el('span', { class: 'chat-who' }, `Proposed edit of plan.md — ${entry.status}`),
        el('p', {}, entry.summary),
        diffView(entry.diff, { 'aria-label': 'Proposed change of plan.md' }),
        ...(entry.status === 'proposed' && job.busy === null
          ? [
              el(
                'div',
                { class: 'buttons' },
                button('Apply', 'apply-plan-edit-button', () =>
                  post({ type: 'applyPlanEdit', jobId: job.id, editId: entry.id }),
                ),
                button(
                  'Discard',
                  'discard-plan-edit-button',
                  () => post({ type: 'discardPlanEdit', jobId: job.id, editId: entry.id }),
                  true,
                ),
              ),
            ]
          : []),
      );
  }
}

function chatLog(job: JobView): HTMLElement {
  const atReview = job.stop.kind === 'review' && job.busy === null;
  const pending = job.chat.pending;
  const log = el(
    'div',
    { class: 'chat-log', role: 'log', 'aria-label': 'Review chat', 'data-testid': 'chat-log' },
    ...(job.chat.entries.length === 0 && !pending
      ? [
          el(
            'p',
            { class: 'muted' },
            'Ask about the plan ("why this order?", "what does step 2 touch?"), or ask for help phrasing your feedback. The chat reads the job\'s files and history; it cannot run or approve anything.',
          ),
        ]
      : []),
    ...job.chat.entries.map((entry) => entryView(job, entry, atReview)),
  );
  if (pending) {
    if (pending.text !== '')
      log.append(
        el('div', { class: 'chat-msg user' }, el('span', { class: 'chat-who' }, 'You'), el('p', {}, pending.text)),
      );
    log.append(
      el(
        'div',
        {
          class: 'chat-msg assistant streaming',
          'data-testid': 'chat-streaming',
          'aria-live': 'polite',
          'aria-busy': 'true',
        },
        el('span', { class: 'chat-who' }, 'Review chat · writing…'),
        pending.reply === ''
          ? el('vscode-progress-ring', { class: 'inline-ring', 'aria-label': 'Thinking' })
          : markdownBlock(pending.reply),
      ),
    );
  }
  const failed = job.chat.error;
  if (failed) {
    const e = failed.error;
    log.append(
      el(
        'p',
        { class: 'error-text', role: 'alert', 'data-testid': 'chat-error' },
        `No answer: ${e.message}${e.advice ? ` ${e.advice}` : ''} Your message is back in the box below.`,
      ),
    );
  }
  // The newest message in view once the log is on the page.
  requestAnimationFrame(() => {
    log.scrollTop = log.scrollHeight;
  });
  return log;
}

interface ChatInput {
  form: HTMLElement;
  text: HTMLTextAreaElement;
  send: HTMLElement;
}

const inputs = new Map<string, ChatInput>();

/** One input per job, kept across snapshots so typing is never interrupted by a push. */
function chatInput(jobId: string): ChatInput {
  const existing = inputs.get(jobId);
  if (existing) return existing;
  const text = el('textarea', {
    id: `chat-input-${jobId}`,
    rows: '3',
    maxlength: String(MAX_MESSAGE_CHARS),
    'data-testid': 'chat-input',
    placeholder: 'Ask the review chat… (Ctrl+Enter sends)',
  }) as HTMLTextAreaElement;
  const debug = el('input', {
    type: 'checkbox',
    id: `chat-debug-${jobId}`,
    'data-testid': 'chat-debug',
  }) as HTMLInputElement;
  debug.checked = jobUi.debugChat;
  debug.addEventListener('change', () => {
    jobUi.debugChat = debug.checked;
  });
  const submit = () => {
    const message = text.value.trim();
    if (message === '' || send.hasAttribute('disabled')) return;
    post({ type: 'sendChat', jobId, text: message, debug: debug.checked });
    text.value = '';
  };
  const send = button('Send', 'chat-send', submit);
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit();
    }
  });
  const form = el(
    'div',
    { class: 'chat-input' },
    el('label', { for: text.id }, 'Message'),
    text,
    el(
      'div',
      { class: 'chat-input-row' },
      el('label', { class: 'check' }, debug, ' Debug tools (audit trail, model calls)'),
      send,
    ),
  );
  const created = { form, text, send };
  inputs.set(jobId, created);
  return created;
}

/** Failed messages already given back to their box, by job (so a later snapshot never overwrites new typing). */
const restored = new Map<string, string>();

export function chatTab(job: JobView): HTMLElement[] {
  const log = memo(
    'chat-log',
    {
      id: job.id,
      entries: job.chat.entries,
      pending: job.chat.pending,
      stop: job.stop.kind,
      busy: job.busy !== null,
      error: job.chat.error,
    },
    () => chatLog(job),
  );
  const input = chatInput(job.id);
  const failed = job.chat.error;
  const key = failed ? `${failed.text}\u0000${failed.error.code}\u0000${failed.error.message}` : undefined;
  if (job.chat.pending) restored.delete(job.id);
  if (failed && key !== undefined && restored.get(job.id) !== key) {
    restored.set(job.id, key);
    if (input.text.value.trim() === '') input.text.value = failed.text;
  }
  if (job.chat.pending) input.send.setAttribute('disabled', '');
  else input.send.removeAttribute('disabled');
  return [log, input.form];
}

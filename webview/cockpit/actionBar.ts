/**
 * The action bar under the selected job: only the actions that apply where the job stands (shared
 * jobActions table), the feedback box for Request changes, the review-cycle warning, progress and errors.
 */
import { jobActions } from '../../src/shared/jobActions';
import type { JobView } from '../../src/shared/protocol';
import { MAX_MESSAGE_CHARS } from '../../src/shared/limits';
import { button, el } from '../common/dom';
import { memo } from '../common/patch';
import { post } from '../common/vscodeApi';

interface FeedbackBox {
  box: HTMLElement;
  text: HTMLTextAreaElement;
  /** Feedback sent with Request changes, cleared from the box once the revised plan is back for review. */
  sent: { text: string; cycle: number } | null;
}

const boxes = new Map<string, FeedbackBox>();
/** The Request changes button of the bar on screen, enabled only with feedback written. */
let requestButton: HTMLElement | undefined;

function syncRequestButton(jobId: string): void {
  const text = boxes.get(jobId)?.text.value.trim() ?? '';
  if (!requestButton) return;
  if (text === '') requestButton.setAttribute('disabled', '');
  else requestButton.removeAttribute('disabled');
}

/** One feedback box per job, kept across snapshots so what the person typed is never lost to a push. */
function feedbackBox(jobId: string): FeedbackBox {
  const existing = boxes.get(jobId);
  if (existing) return existing;
  const text = el('textarea', {
    id: `feedback-${jobId}`,
    rows: '3',
    maxlength: String(MAX_MESSAGE_CHARS),
    'data-testid': 'feedback-input',
    placeholder: 'What should change in the plan? e.g. split the archive into monthly batches',
  }) as HTMLTextAreaElement;
  text.addEventListener('input', () => syncRequestButton(jobId));
  const box = el('div', { class: 'feedback' }, el('label', { for: text.id }, 'Feedback'), text);
  const created: FeedbackBox = { box, text, sent: null };
  boxes.set(jobId, created);
  return created;
}

/** "Use as feedback" of a drafted reply: fills the feedback box and puts the caret in it. */
export function useAsFeedback(jobId: string, draft: string): void {
  const { text } = feedbackBox(jobId);
  text.value = draft;
  syncRequestButton(jobId);
  text.focus();
  text.scrollIntoView({ block: 'nearest' });
}

function buttons(job: JobView): HTMLElement {
  const actions = jobActions(job);
  const overLimit = job.stop.kind === 'review' && job.stop.overLimit;
  // The plan ticket and the hash of the plan on screen: what the click decides, and nothing else.
  const ticketId = job.stop.kind === 'review' ? job.stop.ticketId : null;
  const planHash = job.stop.kind === 'review' ? job.stop.planHash : null;
  const row: HTMLElement[] = [];
  if (actions.includes('approvePlan') && planHash !== null) {
    row.push(
      button('Approve plan', 'approve-plan-button', () =>
        post({ type: 'approvePlan', jobId: job.id, ticketId, planHash }),
      ),
    );
  }
  if (actions.includes('requestChanges')) {
    requestButton = button(
      'Request changes',
      'request-changes-button',
      () => {
        const box = boxes.get(job.id);
        const feedback = box?.text.value.trim() ?? '';
        if (!box || feedback === '' || planHash === null) return;
        box.sent = { text: box.text.value, cycle: job.stop.kind === 'review' ? job.stop.cycle : 0 };
        post({ type: 'requestChanges', jobId: job.id, ticketId, planHash, feedback });
      },
      true,
      { title: 'Sends the feedback above; the agent revises the plan and stops for your review again' },
    );
  } else {
    requestButton = undefined;
  }
  if (requestButton) row.push(requestButton);
  if (actions.includes('skipReview')) {
    row.push(
      button(
        overLimit ? 'Run as is' : 'Skip review and run',
        'skip-review-button',
        () => post({ type: 'skipReview', jobId: job.id, ticketId, planHash }),
        !overLimit,
        { title: 'Approve the plan without another review round' },
      ),
    );
  }
  if (actions.includes('continueJob'))
    row.push(button('Continue', 'continue-job-button', () => post({ type: 'continueJob', jobId: job.id })));
  if (actions.includes('pauseJob')) {
    row.push(
      button('Pause', 'pause-job-button', () => post({ type: 'pauseJob', jobId: job.id }), true, {
        title: 'Stop after the current step; Continue picks it up',
      }),
    );
  }
  if (actions.includes('cancelJob'))
    row.push(button('Cancel job', 'cancel-job-button', () => post({ type: 'cancelJob', jobId: job.id }), true));
  return el('div', { class: 'buttons' }, ...row);
}

export function actionBar(job: JobView): HTMLElement[] {
  const actions = jobActions(job);
  const parts: HTMLElement[] = [];
  if (job.busy) {
    parts.push(
      memo('job-busy', job.busy, () =>
        el(
          'p',
          { class: 'busy', 'data-testid': 'job-busy', role: 'status' },
          el('vscode-progress-ring', { class: 'inline-ring', 'aria-hidden': 'true' }),
          ` ${job.busy?.message ?? ''}`,
        ),
      ),
    );
  }
  if (job.error) {
    const e = job.error;
    parts.push(
      memo('job-error', e, () =>
        el(
          'p',
          { class: 'error-text', role: 'alert', 'data-testid': 'job-error' },
          e.advice ? `${e.message} ${e.advice}` : e.message,
        ),
      ),
    );
  }
  if (job.reviewWarning && actions.includes('skipReview')) {
    const warning = job.reviewWarning;
    parts.push(
      memo('review-warning', warning, () =>
        el('p', { class: 'warning-text', role: 'note', 'data-testid': 'review-warning' }, warning),
      ),
    );
  }
  if (actions.includes('requestChanges')) {
    const box = feedbackBox(job.id);
    // The revised plan is back: the feedback it answers leaves the box (it is in workspace.md now).
    if (box.sent && job.stop.kind === 'review' && job.stop.cycle > box.sent.cycle) {
      if (box.text.value === box.sent.text) box.text.value = '';
      box.sent = null;
    }
    parts.push(box.box);
    const draft = job.chat.draftFeedback;
    if (draft !== null) {
      parts.push(
        memo('use-draft', { id: job.id, draft }, () =>
          el(
            'div',
            { class: 'buttons' },
            button("Use the chat's draft as feedback", 'use-draft-button', () => useAsFeedback(job.id, draft), true),
          ),
        ),
      );
    }
  }
  if (actions.length > 0) {
    // The plan's ticket and hash are in the key: the buttons send them, so a plan edited in review must rebuild them.
    const review =
      job.stop.kind === 'review'
        ? { overLimit: job.stop.overLimit, ticketId: job.stop.ticketId, planHash: job.stop.planHash }
        : null;
    parts.push(memo('job-buttons', { id: job.id, actions, review }, () => buttons(job)));
    syncRequestButton(job.id);
  }
  return parts;
}

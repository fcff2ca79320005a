/** Plan tab: plan.md rendered, "Changed since last review" diff toggle, workspace.md collapsible below. */
import type { JobView } from '../../../src/shared/protocol';
import { button, el } from '../../common/dom';
import { post } from '../../common/vscodeApi';
import { diffView } from './diffView';
import { jobUi, requestRedraw } from '../jobUi';
import { markdownBlock } from '../../common/markdown';

export function planTab(job: JobView): HTMLElement {
  const change = job.planChange;
  const parts: HTMLElement[] = [];
  if (job.stop.kind === 'review') {
    parts.push(
      el(
        'p',
        { class: 'muted', 'data-testid': 'review-cycle' },
        `Review ${job.stop.cycle} of up to ${job.stop.maxReviewCycles}: read the plan, discuss it in Chat, then approve it or request changes below.`,
      ),
    );
  }
  const edit = job.chat.openPlanEdit;
  if (edit) {
    parts.push(
      el(
        'div',
        {
          class: 'plan-edit-offer',
          role: 'region',
          'aria-label': 'Plan edit proposed by the review chat',
          'data-testid': 'plan-edit-offer',
        },
        el('p', {}, el('strong', {}, 'The review chat proposes an edit: '), edit.summary),
        diffView(edit.diff),
        ...(job.busy === null
          ? [
              el(
                'div',
                { class: 'buttons' },
                button('Apply to plan.md', 'offer-apply-plan-edit-button', () =>
                  post({ type: 'applyPlanEdit', jobId: job.id, editId: edit.id }),
                ),
                button(
                  'Discard',
                  'offer-discard-plan-edit-button',
                  () => post({ type: 'discardPlanEdit', jobId: job.id, editId: edit.id }),
                  true,
                ),
              ),
            ]
          : []),
      ),
    );
  }
  if (change && change.diff !== '') {
    const toggle = el(
      'vscode-button',
      {
        secondary: '',
        'data-testid': 'plan-diff-toggle',
        'aria-pressed': String(jobUi.showPlanDiff),
        title: `plan.md at review ${change.fromCycle} → review ${change.toCycle}`,
      },
      jobUi.showPlanDiff ? 'Show the plan' : `Changed since last review (${change.fromCycle} → ${change.toCycle})`,
    );
    toggle.addEventListener('click', () => {
      jobUi.showPlanDiff = !jobUi.showPlanDiff;
      requestRedraw();
    });
    parts.push(el('div', { class: 'buttons' }, toggle));
  } else if (change) {
    parts.push(
      el('p', { class: 'muted' }, `plan.md did not change between review ${change.fromCycle} and ${change.toCycle}.`),
    );
  }
  if (change && change.diff !== '' && jobUi.showPlanDiff) {
    parts.push(
      diffView(change.diff, { 'data-testid': 'plan-diff', 'aria-label': 'Changes of plan.md since the last review' }),
    );
  } else {
    parts.push(
      job.planMd.trim() === ''
        ? el('p', { class: 'muted' }, 'No plan yet.')
        : markdownBlock(job.planMd, { 'data-testid': 'plan-md' }),
    );
  }
  const workspace = el(
    'vscode-collapsible',
    { heading: "workspace.md — the agent's notes on the task", 'data-testid': 'workspace-md' },
    markdownBlock(job.workspaceMd),
  );
  parts.push(workspace);
  return el('div', { class: 'plan-tab' }, ...parts);
}

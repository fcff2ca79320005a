/** Activity tab: tokens and cost so far, the job's own history (a commit per phase and todo), its files. */
import { clock } from '../../../src/shared/clock';
import type { JobView } from '../../../src/shared/protocol';
import { el, fmt, plural } from '../../common/dom';
import { post } from '../../common/vscodeApi';

export function usageText(u: JobView['usage']): string {
  const cost = u.costUsd === null ? 'cost unknown' : `~$${u.costUsd.toFixed(4)}`;
  return `${plural(u.calls, 'model call')} · ${fmt(u.inputTokens)} in / ${fmt(u.outputTokens)} out tokens · ${cost}`;
}

export function activityTab(job: JobView): HTMLElement {
  const history =
    job.history.length === 0
      ? el('p', { class: 'muted' }, 'No history yet.')
      : el(
          'ol',
          { class: 'history', 'aria-label': 'Job history, newest first' },
          ...job.history.map((h) =>
            el(
              'li',
              { 'data-testid': 'history-item' },
              el('code', {}, h.oid),
              ` ${h.message} `,
              el('span', { class: 'muted' }, clock(h.at)),
            ),
          ),
        );
  const files = el(
    'ul',
    { class: 'files', 'aria-label': 'Files of the job' },
    ...job.files.map((path) => {
      const open = el('button', { type: 'button', class: 'link', title: `Open ${path}` }, path);
      open.addEventListener('click', () => post({ type: 'openJobFile', jobId: job.id, path }));
      return el('li', {}, open);
    }),
  );
  return el(
    'div',
    { class: 'activity-tab' },
    el('p', { 'data-testid': 'job-usage' }, usageText(job.usage)),
    el(
      'p',
      { class: 'muted' },
      `Created ${new Date(job.createdAt).toLocaleString()} · updated ${new Date(job.updatedAt).toLocaleString()} · ${job.phase} phase · ${plural(job.reviewCycles, 'review cycle')} · database ${job.connection}`,
    ),
    el('h3', {}, 'History'),
    history,
    el('vscode-collapsible', { heading: `Files (${job.files.length})` }, files),
  );
}

/** The job list (UX "Jobs ▾"): title, status badge and review cycles; a click selects the job. */
import type { JobListItem } from '../../src/shared/protocol';
import { commandButton, el, plural } from '../common/dom';
import { post } from '../common/vscodeApi';

const STATUS_ICON: Record<JobListItem['status'], string> = {
  planning: '◐',
  pending_review: '●',
  running: '◐',
  completed: '✓',
  failed: '✗',
  cancelled: '⊘',
  frozen: '‖',
};

export function jobList(jobs: readonly JobListItem[], selectedId: string | null): HTMLElement {
  const head = el(
    'div',
    { class: 'jobs-head' },
    el('h2', { id: 'jobs-heading' }, 'Jobs'),
    commandButton('New Job…', 'newJob', false, 'new-job-button'),
  );
  if (jobs.length === 0) {
    return el(
      'section',
      { class: 'jobs', 'aria-labelledby': 'jobs-heading', 'data-testid': 'job-list' },
      head,
      el(
        'p',
        { class: 'muted' },
        'No jobs yet. A job is a bigger task: the agent explores the database, writes a plan and todos, and waits for your review before anything runs.',
      ),
    );
  }
  const items = jobs.map((job) => {
    const selected = job.id === selectedId;
    const pick = el(
      'button',
      {
        class: `job-item${selected ? ' selected' : ''}`,
        type: 'button',
        'data-testid': 'job-item',
        'data-job-id': job.id,
        'data-status': job.status,
        'aria-current': selected ? 'true' : 'false',
        title: `${job.title} — ${job.state} (${job.id})`,
      },
      el(
        'span',
        { class: `job-icon status-${job.status}`, 'aria-hidden': 'true' },
        job.busy ? '◌' : STATUS_ICON[job.status],
      ),
      el('span', { class: 'job-title' }, job.title),
      el(
        'span',
        { class: `badge status-${job.status}`, 'data-testid': 'job-status-badge' },
        // The status bar's words for the same job (jobStateText): the two never disagree.
        job.state,
      ),
      ...(job.reviewCycles > 0 ? [el('span', { class: 'muted cycles' }, plural(job.reviewCycles, 'cycle'))] : []),
    );
    pick.addEventListener('click', () => post({ type: 'selectJob', jobId: job.id }));
    return el('li', {}, pick);
  });
  return el(
    'section',
    { class: 'jobs', 'aria-labelledby': 'jobs-heading', 'data-testid': 'job-list' },
    head,
    el('ul', { class: 'job-list' }, ...items),
  );
}

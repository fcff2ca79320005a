/** The job's title, where it stands (data-stop / data-status / data-busy for tests and styles) and its cost so far. */
import type { JobView } from '../../src/shared/protocol';
import { el } from '../common/dom';
import { usageText } from './tabs/activityTab';

export function stopText(job: JobView): string {
  if (job.busy) return job.busy.message;
  const s = job.stop;
  switch (s.kind) {
    case 'review':
      return `waiting for your review (cycle ${s.cycle})`;
    case 'approval':
      return 'waiting for your approval of a write';
    case 'completed':
      return s.summary.trim() === '' ? 'completed' : `completed — ${s.summary}`;
    case 'failed':
      return `failed — ${s.error.message}`;
    case 'cancelled':
      return 'cancelled';
    case 'frozen':
      return 'paused — Continue picks it up where it stopped';
    case 'interrupted':
      return s.error
        ? `stopped by an error: ${s.error.message} — Continue retries from its last checkpoint`
        : 'interrupted (a window reload or a cancelled step) — Continue picks it up from its last checkpoint';
  }
}

export function jobHead(job: JobView): HTMLElement {
  return el(
    'div',
    { class: 'job-head' },
    el('h2', { 'data-testid': 'job-title' }, job.title),
    el(
      'p',
      {
        class: `job-state stop-${job.stop.kind}`,
        'data-testid': 'job-state',
        'data-stop': job.stop.kind,
        'data-status': job.status,
        'data-busy': String(job.busy !== null),
      },
      stopText(job),
    ),
    el('p', { class: 'muted usage' }, usageText(job.usage)),
  );
}

/** Impact tab: the job's write waiting for a decision, drawn by the same card as every other write. */
import type { JobView } from '../../../src/shared/protocol';
import { approvalCard } from '../../common/approvalCard';
import { el } from '../../common/dom';

export function impactTab(job: JobView): HTMLElement {
  if (job.approval) {
    return el(
      'div',
      {},
      el(
        'p',
        { class: 'muted' },
        `The job wants to run this write${job.stop.kind === 'approval' && job.stop.todoId ? ` (todo ${job.stop.todoId})` : ''}. It is also open in an editor with CodeLens actions.`,
      ),
      approvalCard(job.approval),
    );
  }
  return el(
    'p',
    { class: 'muted', 'data-testid': 'no-impact' },
    'No write of this job is waiting for approval. Every write the job wants to run shows up here and in an editor, with its exact impact, and runs only after you approve it.',
  );
}

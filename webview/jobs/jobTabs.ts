/** The selected job's tabs (Plan | Todos 3/7 | Impact ! | Chat | Activity): ARIA tabs with arrow keys. */
import type { JobView } from '../../src/shared/protocol';
import { el } from '../dom';
import type { JobTab } from './jobUi';
import { JOB_TABS, selectTab } from './jobUi';

function tabLabel(tab: JobTab, job: JobView): string {
  switch (tab) {
    case 'plan':
      return 'Plan';
    case 'todos':
      return job.todos.ok ? `Todos ${job.todos.counts.done + job.todos.counts.skipped}/${job.todos.counts.total}` : 'Todos !';
    case 'impact':
      return job.approval?.status === 'pending' ? 'Impact !' : 'Impact';
    case 'chat':
      return job.chat.pending ? 'Chat …' : 'Chat';
    case 'activity':
      return 'Activity';
  }
}

export function tabBar(job: JobView, active: JobTab): HTMLElement {
  const tabs = JOB_TABS.map((tab) => {
    const selected = tab === active;
    const b = el(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `job-tab-${tab}`,
        class: `tab${selected ? ' active' : ''}`,
        'aria-selected': String(selected),
        'aria-controls': 'job-tabpanel',
        tabindex: selected ? '0' : '-1',
        'data-testid': `job-tab-${tab}`,
      },
      tabLabel(tab, job),
    );
    b.addEventListener('click', () => selectTab(tab));
    b.addEventListener('keydown', (event) => {
      const i = JOB_TABS.indexOf(tab);
      const next = event.key === 'ArrowRight' ? JOB_TABS[(i + 1) % JOB_TABS.length] : event.key === 'ArrowLeft' ? JOB_TABS[(i + JOB_TABS.length - 1) % JOB_TABS.length] : event.key === 'Home' ? JOB_TABS[0] : event.key === 'End' ? JOB_TABS[JOB_TABS.length - 1] : undefined;
      if (next === undefined) return;
      event.preventDefault();
      selectTab(next);
      document.getElementById(`job-tab-${next}`)?.focus();
    });
    return b;
  });
  return el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Job views' }, ...tabs);
}

/** UX "Impact" view of one write: risk, rows per table as bars (direct/cascade/trigger), the SQL, the decision. */
import { clock } from '../src/shared/clock';
import type { ApprovalView } from '../src/shared/protocol';
import { button, el, fmt } from './dom';
import { post } from './vscodeApi';

const STATUS_TEXT: Record<ApprovalView['status'], string> = {
  pending: 'waiting for your approval',
  stale: 'SQL changed — re-checking the impact',
  running: 'running…',
  executed: 'executed',
  rejected: 'rejected — nothing ran',
  failed: 'failed — rolled back',
};

export function approvalCard(a: ApprovalView): HTMLElement {
  const i = a.impact;
  const max = Math.max(1, ...i.tables.map((t) => t.inserted + t.updated + t.deleted));
  const bars = el(
    'div',
    { class: 'bars', role: 'table', 'aria-label': 'Rows changed per table' },
    ...i.tables.map((t) => {
      const total = t.inserted + t.updated + t.deleted;
      const what = [t.deleted ? `${fmt(t.deleted)} deleted` : '', t.updated ? `${fmt(t.updated)} updated` : '', t.inserted ? `${fmt(t.inserted)} inserted` : ''].filter(Boolean).join(', ');
      const bar = el('span', { class: `bar via-${t.via}` });
      bar.style.width = `${Math.max(2, Math.round((total / max) * 100))}%`;
      return el(
        'div',
        { class: 'bar-row', role: 'row', 'data-testid': 'impact-row' },
        el('span', { class: 'table-name', role: 'cell' }, t.name),
        el('span', { class: 'muted', role: 'cell' }, `${what} (${t.via})`),
        el('span', { class: 'bar-track', role: 'cell' }, bar),
      );
    }),
  );
  const facts = [
    `planner estimate ${i.estimatedRows === null ? 'n/a' : fmt(i.estimatedRows)} (statement's own rows)`,
    `exact ${i.exactRows === null ? 'not previewed' : `${fmt(i.exactRows)} in ${i.tables.length} table${i.tables.length === 1 ? '' : 's'}`}`,
    `preview ${fmt(i.previewMs)} ms`,
  ].join(' · ');
  const actions: HTMLElement[] = [];
  if (a.status === 'pending') {
    actions.push(
      button('Approve & run', 'approve-button', () => post({ type: 'decide', ticketId: a.ticketId, approve: true })),
      button('Reject', 'reject-button', () => post({ type: 'decide', ticketId: a.ticketId, approve: false }), true),
    );
  }
  actions.push(button('Open SQL', 'open-sql-button', () => post({ type: 'openSql', ticketId: a.ticketId }), true));
  if (a.executed) actions.push(button('Undo script', 'undo-button', () => post({ type: 'openUndo', ticketId: a.ticketId }), true));
  return el(
    'section',
    { class: `approval status-${a.status}`, 'data-testid': 'approval-card', 'data-status': a.status },
    el('div', { class: 'approval-head' }, el('span', { class: `risk risk-${i.risk}`, 'data-testid': 'risk-badge' }, i.risk), el('span', {}, STATUS_TEXT[a.status])),
    el('pre', { class: 'sql' }, a.sql.trim()),
    bars,
    el('p', { class: 'muted' }, facts),
    ...i.foreignKeyActions.map((f) => el('p', { class: 'muted' }, `foreign key ${f.constraint}: ${f.action} → ${f.table}`)),
    ...i.triggers.map((t) => el('p', { class: 'muted' }, `trigger ${t.name} on ${t.table}`)),
    ...(i.wouldFail ? [el('p', { class: 'error-text' }, `Would fail: ${i.wouldFail.message} (${i.wouldFail.code})`)] : []),
    ...i.warnings.map((w) => el('p', { class: 'warning-text' }, w)),
    ...(a.executed ? [el('p', {}, `Executed ${clock(a.executed.at)} · ${fmt(a.executed.rows)} rows`)] : []),
    ...(a.error ? [el('p', { class: 'error-text' }, a.error.message)] : []),
    el('div', { class: 'buttons' }, ...actions),
  );
}

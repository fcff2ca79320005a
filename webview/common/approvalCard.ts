/** UX "Impact" view of one write: risk, rows per table as bars (direct/cascade/trigger), the SQL, the decision. */
import { clock } from '../../src/shared/clock';
import { describeLock, describeLockHolder } from '../../src/shared/lockPhrases';
import { describeReach, reachToShow } from '../../src/shared/reachPhrases';
import type { ApprovalView, ImpactView } from '../../src/shared/protocol';
import { statementView, visibleText } from '../../src/shared/visibleSql';
import { button, el, fmt } from './dom';
import { post } from './vscodeApi';

const STATUS_TEXT: Record<ApprovalView['status'], string> = {
  pending: 'waiting for your approval',
  stale: 'SQL changed — re-checking the impact',
  approved: 'approved — waiting for the agent to run it',
  running: 'running…',
  executed: 'executed',
  rejected: 'rejected — nothing ran',
  failed: 'failed — rolled back',
};

/** "Approved by alice ✓ signed, bob": who decided, and whose signature verified against the workspace's approvers. */
function decidedBy(a: ApprovalView): HTMLElement[] {
  const decisions = a.decisions ?? [];
  if (decisions.length === 0) return [];
  const approved = decisions.filter((d) => d.approve);
  const list = (approved.length > 0 ? approved : decisions)
    .map((d) => `${d.by}${d.signed ? ' ✓ signed' : ''}`)
    .join(', ');
  return [
    el(
      'p',
      { class: 'muted', 'data-testid': 'decided-by' },
      `${approved.length > 0 ? 'Approved' : 'Rejected'} by ${list}`,
    ),
  ];
}

/** Locks, rewrites, dependents and lint of DDL (SPEC §5.4a); empty for impacts stored before they existed. */
function ddlSection(a: ApprovalView): HTMLElement[] {
  const i: Partial<ImpactView> = a.impact;
  const parts: HTMLElement[] = [];
  if (i.transactional === false) {
    parts.push(
      el(
        'p',
        { class: 'error-text', 'data-testid': 'not-transactional' },
        `${CANNOT_ROLL_BACK}: it runs outside a transaction, alone, once approved.`,
      ),
    );
  }
  // Plain data changes take ROW EXCLUSIVE, which blocks no reads or writes: not worth a line.
  for (const lock of (i.locks ?? []).filter((l) => l.mode !== 'ROW EXCLUSIVE' || l.waitsBehind > 0)) {
    const waits =
      lock.waitsBehind > 0 ? ` · waits behind ${lock.waitsBehind} session${lock.waitsBehind === 1 ? '' : 's'}` : '';
    parts.push(
      el(
        'p',
        { class: lock.blocks === 'nothing' ? 'muted' : 'warning-text', 'data-testid': 'lock-line' },
        `${capitalise(describeLock(lock))}${waits}`,
      ),
    );
  }
  // Issue 25: who held or awaited a conflicting lock when the impact was computed (the executor checks again
  // and waits only briefly), and the way back from what the statement destroys.
  for (const holder of i.lockHolders ?? []) {
    parts.push(
      el(
        'p',
        { class: 'warning-text', 'data-testid': 'lock-holder' },
        visibleText(`In the way: ${describeLockHolder(holder)}`),
      ),
    );
  }
  for (const way of i.recovery ?? []) {
    parts.push(
      el(
        'p',
        { class: way.way === 'none' ? 'error-text' : 'muted', 'data-testid': 'way-back', 'data-way': way.way },
        visibleText(way.summary),
      ),
    );
  }
  const unlocked = (i.rewrites ?? []).filter(
    (t) => !(i.locks ?? []).some((l) => l.table === t && l.work === 'rewrite'),
  );
  if (unlocked.length > 0) parts.push(el('p', { class: 'warning-text' }, `Rewrites ${unlocked.join(', ')}`));
  for (const d of i.dependents ?? [])
    parts.push(
      el('p', { class: 'muted', 'data-testid': 'dependent-line' }, visibleText(`${d.kind} ${d.name}: ${d.effect}`)),
    );
  for (const finding of i.lint ?? []) {
    const safer: HTMLElement[] = [];
    if (finding.saferSql !== undefined) {
      safer.push(el('pre', { class: 'safer-sql', 'data-testid': 'safer-sql' }, visibleText(finding.saferSql)));
      if (a.status === 'pending' || a.status === 'stale') {
        safer.push(
          el(
            'div',
            { class: 'buttons' },
            button(
              'Use the safer statement',
              'use-safer-button',
              () => post({ type: 'useSaferSql', ticketId: a.ticketId, rule: finding.rule }),
              true,
            ),
          ),
        );
      }
    }
    parts.push(
      el(
        'div',
        { class: `lint lint-${finding.severity}`, 'data-testid': 'lint-finding', 'data-rule': finding.rule },
        el(
          'p',
          {
            class: finding.severity === 'info' ? 'muted' : finding.severity === 'error' ? 'error-text' : 'warning-text',
          },
          `${finding.severity}: ${finding.message}`,
        ),
        el('p', { class: 'muted' }, finding.advice),
        ...safer,
      ),
    );
  }
  return parts;
}

const CANNOT_ROLL_BACK = 'Cannot be rolled back';

/** The database's own code the write runs (SPEC §5 1a): what does something first; empty for older impacts. */
function reachSection(a: ApprovalView): HTMLElement[] {
  const { shown, safeLeftOut } = reachToShow((a.impact as Partial<ImpactView>).reach ?? []);
  if (shown.length === 0) return [];
  return [
    el(
      'div',
      { class: 'reach', 'data-testid': 'reach' },
      el('p', { class: 'muted' }, "Runs the database's own code:"),
      ...shown.map((entry) =>
        el(
          'p',
          {
            class: entry.verdict === 'safe' ? 'muted' : 'warning-text',
            'data-testid': 'reach-entry',
            'data-verdict': entry.verdict,
          },
          describeReach(entry),
        ),
      ),
      ...(safeLeftOut > 0
        ? [
            el(
              'p',
              { class: 'muted' },
              `and ${safeLeftOut} more function${safeLeftOut === 1 ? '' : 's'} that only compute`,
            ),
          ]
        : []),
    ),
  ];
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Who proposed an outside write and who runs it: an agent with execute_approved, or, for a client transaction held
 * whole by pg-agent guard, the client's own retry through the guard (its statements are the SQL below, in order).
 */
function proposedBy(a: ApprovalView): HTMLElement[] {
  if (a.proposedBy === undefined) return [];
  if (a.transaction) {
    const n = a.transaction.statements;
    return [
      el(
        'p',
        { class: 'muted', 'data-testid': 'guard-transaction' },
        `One transaction through pg-agent guard: ${n} statement${n === 1 ? '' : 's'} in order, with the values of its measured run; rows per table as it changed them.`,
      ),
      el(
        'p',
        { class: 'muted', 'data-testid': 'proposed-by' },
        visibleText(
          `Proposed by ${a.proposedBy}. Approving records your decision; the client's retry commits it (the same statements, values may differ, within these rows), not this window.`,
        ),
      ),
    ];
  }
  return [
    el(
      'p',
      { class: 'muted', 'data-testid': 'proposed-by' },
      visibleText(
        `Proposed by ${a.proposedBy}. Approving records your decision; the agent runs it (execute_approved), not this window.`,
      ),
    ),
  ];
}

/** `readOnly`: a record of a write (a job's earlier writes in its cockpit), without its buttons. */
export function approvalCard(a: ApprovalView, options: { readOnly?: boolean } = {}): HTMLElement {
  const i = a.impact;
  const max = Math.max(1, ...i.tables.map((t) => t.inserted + t.updated + t.deleted));
  const bars = el(
    'div',
    { class: 'bars', role: 'table', 'aria-label': 'Rows changed per table' },
    ...i.tables.map((t) => {
      const total = t.inserted + t.updated + t.deleted;
      const what = [
        t.deleted ? `${fmt(t.deleted)} deleted` : '',
        t.updated ? `${fmt(t.updated)} updated` : '',
        t.inserted ? `${fmt(t.inserted)} inserted` : '',
      ]
        .filter(Boolean)
        .join(', ');
      const bar = el('span', { class: `bar via-${t.via}` });
      bar.style.width = `${Math.max(2, Math.round((total / max) * 100))}%`;
      return el(
        'div',
        { class: 'bar-row', role: 'row', 'data-testid': 'impact-row' },
        el('span', { class: 'table-name', role: 'cell' }, visibleText(t.name)),
        el('span', { class: 'muted', role: 'cell' }, `${what} (${t.via})`),
        el('span', { class: 'bar-track', role: 'cell' }, bar),
      );
    }),
  );
  const facts = [
    `planner estimate ${i.estimatedRows === null ? 'n/a' : fmt(i.estimatedRows)} (statement's own rows)`,
    `exact ${i.exactRows === null ? 'not previewed' : `${fmt(i.exactRows)} in ${i.tables.length} table${i.tables.length === 1 ? '' : 's'}`}`,
    (i as Partial<ImpactView>).previewed === false
      ? `analysed without running in ${fmt(i.previewMs)} ms`
      : `preview ${fmt(i.previewMs)} ms`,
  ].join(' · ');
  // What runs, every hidden character shown; flagged in the head and above the statement (SPEC §5 3a). The
  // host asks once more in a modal before running a flagged statement, whichever button approved it.
  const statement = statementView(a.sql.trim());
  const flag = statement.flag;
  const actions: HTMLElement[] = [];
  if (a.status === 'pending') {
    actions.push(
      // An outside agent's proposal: approving only decides it, the agent that proposed it runs it.
      button(a.proposedBy === undefined ? 'Approve & run' : 'Approve for the agent', 'approve-button', () =>
        post({ type: 'decide', ticketId: a.ticketId, approve: true }),
      ),
      button('Reject', 'reject-button', () => post({ type: 'decide', ticketId: a.ticketId, approve: false }), true),
    );
  }
  actions.push(button('Open SQL', 'open-sql-button', () => post({ type: 'openSql', ticketId: a.ticketId }), true));
  if (a.executed)
    actions.push(button('Undo script', 'undo-button', () => post({ type: 'openUndo', ticketId: a.ticketId }), true));
  return el(
    'section',
    { class: `approval status-${a.status}`, 'data-testid': 'approval-card', 'data-status': a.status },
    el(
      'div',
      { class: 'approval-head' },
      el('span', { class: `risk risk-${i.risk}`, 'data-testid': 'risk-badge' }, i.risk),
      ...(flag
        ? [el('span', { class: 'badge hidden-badge', 'data-testid': 'hidden-badge', title: flag.sentence }, flag.badge)]
        : []),
      el(
        'span',
        {},
        a.status === 'approved' && a.transaction
          ? "approved — waiting for the client's retry to commit it"
          : STATUS_TEXT[a.status],
      ),
    ),
    ...decidedBy(a),
    ...proposedBy(a),
    ...(flag ? [el('p', { class: 'warning-text', role: 'alert', 'data-testid': 'hidden-chars' }, flag.sentence)] : []),
    el('pre', { class: 'sql' }, statement.text),
    bars,
    el('p', { class: 'muted' }, facts),
    ...ddlSection(a),
    ...i.foreignKeyActions.map((f) =>
      el('p', { class: 'muted' }, `foreign key ${f.constraint}: ${f.action} → ${f.table}`),
    ),
    ...i.triggers.map((t) => el('p', { class: 'muted' }, visibleText(`trigger ${t.name} on ${t.table}`))),
    ...reachSection(a),
    ...(i.wouldFail
      ? [el('p', { class: 'error-text' }, visibleText(`Would fail: ${i.wouldFail.message} (${i.wouldFail.code})`))]
      : []),
    // "Cannot be rolled back" has its own line above (ddlSection).
    ...i.warnings
      .filter((w) => !w.startsWith(CANNOT_ROLL_BACK))
      .map((w) => el('p', { class: 'warning-text' }, visibleText(w))),
    ...(a.executed ? [el('p', {}, `Executed ${clock(a.executed.at)} · ${fmt(a.executed.rows)} rows`)] : []),
    ...(a.error ? [el('p', { class: 'error-text' }, a.error.message)] : []),
    ...(options.readOnly === true ? [] : [el('div', { class: 'buttons' }, ...actions)]),
  );
}

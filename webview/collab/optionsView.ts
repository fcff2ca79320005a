/** The options of the last round as cards with a trade-off table, each with its Choose button. */
import type { CollabSolutionView } from '../../src/shared/collabProtocol';
import { action, fmt, h, list, pct } from './h';

export function optionCards(solutions: readonly CollabSolutionView[], choose: ((option: number) => void) | null, selected: number | null): HTMLElement {
  return h(
    'div',
    { class: 'options', 'data-testid': 'options' },
    ...solutions.map((s, i) =>
      h(
        'article',
        { class: `option${selected === i + 1 ? ' chosen' : ''}`, 'data-testid': `option-${i + 1}` },
        h('h3', {}, `Option ${i + 1}: ${s.name}`),
        h('p', {}, s.description),
        tradeOffs(s),
        s.pros.length > 0 ? h('div', { class: 'pros' }, h('h4', {}, 'Pros'), list(s.pros)) : null,
        s.cons.length > 0 ? h('div', { class: 'cons' }, h('h4', {}, 'Cons'), list(s.cons)) : null,
        s.refuted.length > 0 ? h('div', { class: 'refuted' }, h('h4', {}, 'Refuted by the database'), list(s.refuted)) : null,
        choose ? action(selected === i + 1 ? 'Chosen — write the plan again' : 'Choose this option', `choose-option-${i + 1}`, () => choose(i + 1), { secondary: selected !== null && selected !== i + 1 }) : null,
      ),
    ),
  );
}

function tradeOffs(s: CollabSolutionView): HTMLElement {
  const rows: [string, string][] = [
    ['Effort', s.effort],
    ['Risk', s.risk],
    ['Feasibility (SQL verified)', pct(s.feasibility)],
    ['Rows touched', s.rowsTouched === null ? 'unknown' : fmt(s.rowsTouched)],
    ['Locks', s.locks.join(', ') || 'none reported'],
    ['Maintainability', s.maintainability],
    ['Performance', s.performance],
    ['Objects', s.affectedObjects.join(', ') || '—'],
    ['Proposed by', s.sourceModels.join(', ') || '—'],
  ];
  return h('table', { class: 'tradeoffs' }, h('tbody', {}, ...rows.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v)))));
}

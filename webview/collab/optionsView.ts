/** The options of the last round as cards with a trade-off table, each with its Choose button. */
import type { CollabSolutionView } from '../../src/shared/collabProtocol';
import { button, el, fmt, list, pct } from '../common/dom';

export function optionCards(
  solutions: readonly CollabSolutionView[],
  choose: ((option: number) => void) | null,
  selected: number | null,
): HTMLElement {
  return el(
    'div',
    { class: 'options', 'data-testid': 'options' },
    ...solutions.map((s, i) =>
      el(
        'article',
        { class: `option${selected === i + 1 ? ' chosen' : ''}`, 'data-testid': `option-${i + 1}` },
        el('h3', {}, `Option ${i + 1}: ${s.name}`),
        el('p', {}, s.description),
        tradeOffs(s),
        s.pros.length > 0 ? el('div', { class: 'pros' }, el('h4', {}, 'Pros'), list(s.pros)) : null,
        s.cons.length > 0 ? el('div', { class: 'cons' }, el('h4', {}, 'Cons'), list(s.cons)) : null,
        s.refuted.length > 0
          ? el('div', { class: 'refuted' }, el('h4', {}, 'Refuted by the database'), list(s.refuted))
          : null,
        choose
          ? button(
              selected === i + 1 ? 'Chosen — write the plan again' : 'Choose this option',
              `choose-option-${i + 1}`,
              () => choose(i + 1),
              selected !== null && selected !== i + 1,
            )
          : null,
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
  return el(
    'table',
    { class: 'tradeoffs' },
    el('tbody', {}, ...rows.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v)))),
  );
}

/** One round of the session: each analysis side by side, the cross-verification, what the database refuted. */
import type { CollabAnalysisView, CollabRoundView } from '../../src/shared/collabProtocol';
import { visibleText } from '../../src/shared/visibleSql';
import { el, fmt, list, usd } from '../common/dom';

export function roundDetails(round: CollabRoundView): HTMLElement {
  const c = round.convergence;
  return el(
    'section',
    { class: 'round', 'data-testid': `round-${round.round}` },
    el('h2', {}, `Round ${round.round}${round.superseded ? ' (before a change of direction)' : ''}`),
    round.userInput ? el('p', { class: 'user-input' }, `Your input: ${round.userInput}`) : null,
    round.degraded
      ? el('p', { class: 'degraded', 'data-testid': 'degraded' }, `Degraded round: ${round.degraded}`)
      : null,
    el(
      'p',
      { class: 'muted' },
      `Convergence ${c.score.toFixed(2)} = 0.5 × agreement ${c.agreement} + 0.3 × feasibility ${c.feasibility} + 0.2 × stability ${c.stability} → ${c.recommendation.replace(/_/g, ' ')}`,
    ),
    el('div', { class: 'analyses', 'data-testid': 'analyses' }, ...round.analyses.map(analysisCard)),
    crossVerification(round),
    round.refuted.length > 0
      ? el(
          'div',
          { class: 'refuted', 'data-testid': 'refuted' },
          el('h3', {}, 'Refuted by the database'),
          ...round.refuted.map((r) =>
            el(
              'div',
              { class: 'refuted-item' },
              el('code', {}, visibleText(`${r.approachId}: ${r.sql}`)),
              list(r.refuted),
            ),
          ),
        )
      : null,
  );
}

function analysisCard(a: CollabAnalysisView): HTMLElement {
  const who = a.sameModelPerspective ? `${a.model} — same model, ${a.perspective} perspective` : a.model;
  return el(
    'article',
    { class: 'analysis', 'data-testid': `analysis-${a.label}` },
    el('h3', {}, `Analysis ${a.label} · ${a.perspective}`),
    el(
      'p',
      { class: 'muted' },
      `${who} · ${fmt(a.tokens.input)}/${fmt(a.tokens.output)} tokens · ${fmt(a.latencyMs)} ms · ${usd(a.costUsd)}`,
    ),
    a.fallback
      ? el(
          'p',
          { class: 'fallback' },
          `Fallback: ${a.fallback.from} failed (${a.fallback.reason}); ${a.model} took over.`,
        )
      : null,
    el('p', {}, a.understanding),
    el('h4', {}, 'Approaches'),
    list(a.approaches.map((x) => `${x.id} ${x.name} (${x.effort} effort): ${x.description}`)),
    a.risks.length > 0 ? el('h4', {}, 'Risks') : null,
    a.risks.length > 0 ? list(a.risks) : null,
  );
}

function crossVerification(round: CollabRoundView): HTMLElement {
  return el(
    'div',
    { class: 'cross', 'data-testid': 'cross-verification' },
    el(
      'div',
      {},
      el('h3', {}, `Agreements (${round.agreements.length})`),
      list(round.agreements.map((p) => `✓ ${p.point} — ${p.reason} (review by ${p.by})`)),
    ),
    el(
      'div',
      {},
      el('h3', {}, `Disagreements (${round.disagreements.length})`),
      list(round.disagreements.map((p) => `✗ ${p.point} — ${p.reason} (review by ${p.by})`)),
    ),
  );
}

/** The convergence score per round as bars, with the 0.8 line. */
export function convergenceChart(
  rounds: readonly CollabRoundView[],
  selected: number,
  onSelect: (round: number) => void,
): HTMLElement {
  const bars = rounds.map((r) => {
    const bar = el('div', { class: `bar${r.convergence.score >= 0.8 ? ' converged' : ''}` });
    bar.style.height = `${Math.max(4, Math.round(r.convergence.score * 100))}%`;
    const column = el(
      'button',
      {
        class: `chart-column${r.round === selected ? ' selected' : ''}`,
        'data-testid': `timeline-round-${r.round}`,
        title: `Round ${r.round}: ${r.convergence.score.toFixed(2)} (${r.convergence.recommendation})`,
      },
      el('span', { class: 'score' }, r.convergence.score.toFixed(2)),
      el('div', { class: 'bar-track' }, bar),
      el('span', { class: 'label' }, `R${r.round}${r.superseded ? '*' : ''}`),
    );
    column.addEventListener('click', () => onSelect(r.round));
    return column;
  });
  return el(
    'div',
    { class: 'chart', 'data-testid': 'convergence-chart', role: 'group', 'aria-label': 'Convergence per round' },
    el('div', { class: 'threshold' }),
    ...bars,
  );
}

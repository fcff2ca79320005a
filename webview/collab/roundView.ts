/** One round of the session: each analysis side by side, the cross-verification, what the database refuted. */
import type { CollabAnalysisView, CollabRoundView } from '../../src/shared/collabProtocol';
import { visibleText } from '../../src/shared/visibleSql';
import { fmt, h, list, usd } from './h';

export function roundDetails(round: CollabRoundView): HTMLElement {
  const c = round.convergence;
  return h(
    'section',
    { class: 'round', 'data-testid': `round-${round.round}` },
    h('h2', {}, `Round ${round.round}${round.superseded ? ' (before a change of direction)' : ''}`),
    round.userInput ? h('p', { class: 'user-input' }, `Your input: ${round.userInput}`) : null,
    round.degraded ? h('p', { class: 'degraded', 'data-testid': 'degraded' }, `Degraded round: ${round.degraded}`) : null,
    h('p', { class: 'muted' }, `Convergence ${c.score.toFixed(2)} = 0.5 × agreement ${c.agreement} + 0.3 × feasibility ${c.feasibility} + 0.2 × stability ${c.stability} → ${c.recommendation.replace(/_/g, ' ')}`),
    h('div', { class: 'analyses', 'data-testid': 'analyses' }, ...round.analyses.map(analysisCard)),
    crossVerification(round),
    round.refuted.length > 0
      ? h(
          'div',
          { class: 'refuted', 'data-testid': 'refuted' },
          h('h3', {}, 'Refuted by the database'),
          ...round.refuted.map((r) => h('div', { class: 'refuted-item' }, h('code', {}, visibleText(`${r.approachId}: ${r.sql}`)), list(r.refuted))),
        )
      : null,
  );
}

function analysisCard(a: CollabAnalysisView): HTMLElement {
  const who = a.sameModelPerspective ? `${a.model} — same model, ${a.perspective} perspective` : a.model;
  return h(
    'article',
    { class: 'analysis', 'data-testid': `analysis-${a.label}` },
    h('h3', {}, `Analysis ${a.label} · ${a.perspective}`),
    h('p', { class: 'muted' }, `${who} · ${fmt(a.tokens.input)}/${fmt(a.tokens.output)} tokens · ${fmt(a.latencyMs)} ms · ${usd(a.costUsd)}`),
    a.fallback ? h('p', { class: 'fallback' }, `Fallback: ${a.fallback.from} failed (${a.fallback.reason}); ${a.model} took over.`) : null,
    h('p', {}, a.understanding),
    h('h4', {}, 'Approaches'),
    list(a.approaches.map((x) => `${x.id} ${x.name} (${x.effort} effort): ${x.description}`)),
    a.risks.length > 0 ? h('h4', {}, 'Risks') : null,
    a.risks.length > 0 ? list(a.risks) : null,
  );
}

function crossVerification(round: CollabRoundView): HTMLElement {
  return h(
    'div',
    { class: 'cross', 'data-testid': 'cross-verification' },
    h('div', {}, h('h3', {}, `Agreements (${round.agreements.length})`), list(round.agreements.map((p) => `✓ ${p.point} — ${p.reason} (review by ${p.by})`))),
    h('div', {}, h('h3', {}, `Disagreements (${round.disagreements.length})`), list(round.disagreements.map((p) => `✗ ${p.point} — ${p.reason} (review by ${p.by})`))),
  );
}

/** The convergence score per round as bars, with the 0.8 line. */
export function convergenceChart(rounds: readonly CollabRoundView[], selected: number, onSelect: (round: number) => void): HTMLElement {
  const bars = rounds.map((r) => {
    const bar = h('div', { class: `bar${r.convergence.score >= 0.8 ? ' converged' : ''}` });
    bar.style.height = `${Math.max(4, Math.round(r.convergence.score * 100))}%`;
    const column = h(
      'button',
      { class: `chart-column${r.round === selected ? ' selected' : ''}`, 'data-testid': `timeline-round-${r.round}`, title: `Round ${r.round}: ${r.convergence.score.toFixed(2)} (${r.convergence.recommendation})` },
      h('span', { class: 'score' }, r.convergence.score.toFixed(2)),
      h('div', { class: 'bar-track' }, bar),
      h('span', { class: 'label' }, `R${r.round}${r.superseded ? '*' : ''}`),
    );
    column.addEventListener('click', () => onSelect(r.round));
    return column;
  });
  return h('div', { class: 'chart', 'data-testid': 'convergence-chart', role: 'group', 'aria-label': 'Convergence per round' }, h('div', { class: 'threshold' }), ...bars);
}

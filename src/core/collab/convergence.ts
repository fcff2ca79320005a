/**
 * Convergence, computed in code (never asked of a model): score = 0.5·agreement + 0.3·feasibility +
 * 0.2·stability. ≥ 0.8 → converged; more than 3 open disagreements → the person is asked; else another
 * round while the run has rounds left, otherwise the best options are shown with the uncertainty flagged.
 */
import type { Convergence, Recommendation } from './sessionTypes';

export const CONVERGED_AT = 0.8;
export const MAX_OPEN_DISAGREEMENTS = 3;
export const WEIGHTS = { agreement: 0.5, feasibility: 0.3, stability: 0.2 } as const;

export interface ConvergenceInput {
  agreements: number;
  disagreements: number;
  feasibility: number;
  /** Insights the reviewers raised this round. */
  insights: readonly string[];
  /** Insights already raised in earlier rounds of the current direction. */
  knownInsights: readonly string[];
  /** Rounds left in this run of automatic rounds after this one. */
  roundsLeft: number;
}

/** Agreement ratio: agreements over all review points; with no points at all, nothing was agreed. */
export function agreementRatio(agreements: number, disagreements: number): number {
  const total = agreements + disagreements;
  return total === 0 ? 0 : agreements / total;
}

/** Stability: the share of this round's insights that are not new (1 when there are none). */
export function stabilityOf(
  insights: readonly string[],
  known: readonly string[],
): { stability: number; newInsights: string[] } {
  const knownSet = new Set(known.map(normalizeText));
  const fresh = dedupe(insights).filter((i) => !knownSet.has(normalizeText(i)));
  const total = dedupe(insights).length;
  return { stability: total === 0 ? 1 : (total - fresh.length) / total, newInsights: fresh };
}

export function computeConvergence(input: ConvergenceInput): Convergence {
  const agreement = agreementRatio(input.agreements, input.disagreements);
  const feasibility = clamp(input.feasibility);
  const { stability, newInsights } = stabilityOf(input.insights, input.knownInsights);
  const score = round3(
    WEIGHTS.agreement * agreement + WEIGHTS.feasibility * feasibility + WEIGHTS.stability * stability,
  );
  return {
    score,
    components: { agreement: round3(agreement), feasibility: round3(feasibility), stability: round3(stability) },
    openDisagreements: input.disagreements,
    newInsights,
    recommendation: recommend(score, input.disagreements, input.roundsLeft),
  };
}

export function recommend(score: number, openDisagreements: number, roundsLeft: number): Recommendation {
  if (score >= CONVERGED_AT) return 'converged';
  if (openDisagreements > MAX_OPEN_DISAGREEMENTS) return 'user_input_needed';
  return roundsLeft > 0 ? 'continue' : 'max_rounds';
}

export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

function dedupe(items: readonly string[]): string[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = normalizeText(item);
    if (key === '' || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function clamp(n: number): number {
  return Math.min(1, Math.max(0, n));
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

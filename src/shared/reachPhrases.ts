/**
 * How the database's own code a statement runs (SPEC §5 1a) reads for a person, the same in the terminal, the
 * approval card and the Impact tab: what does something first, then how many pieces only compute.
 */
import { visibleText } from './visibleSql';

export interface ReachPhraseInput {
  function: string;
  via: string;
  verdict: 'safe' | 'side-effect' | 'unknown';
  effect?: string;
}

/**
 * "public.rt_shell() — trigger t_del on public.t (BEFORE DELETE, row): runs COPY … TO PROGRAM". Names come
 * from the database's catalog (anyone who can create a function names it): hidden characters shown.
 */
export function describeReach(entry: ReachPhraseInput): string {
  const what =
    entry.verdict === 'safe'
      ? 'only computes'
      : entry.verdict === 'unknown'
        ? `unknown code${entry.effect ? `: ${entry.effect}` : ''}`
        : (entry.effect ?? 'has a side effect');
  return visibleText(`${entry.function} — ${entry.via}: ${what}`);
}

/** The entries a person must see (side effects and unknown code first), and how many safe ones are left out. */
export function reachToShow(
  entries: readonly ReachPhraseInput[],
  limit = 8,
): { shown: ReachPhraseInput[]; safeLeftOut: number } {
  const rank = { 'side-effect': 0, unknown: 1, safe: 2 } as const;
  const sorted = [...entries].sort((a, b) => rank[a.verdict] - rank[b.verdict]);
  const flagged = sorted.filter((e) => e.verdict !== 'safe');
  const safe = sorted.filter((e) => e.verdict === 'safe');
  const room = Math.max(0, limit - flagged.length);
  return { shown: [...flagged, ...safe.slice(0, room)], safeLeftOut: Math.max(0, safe.length - room) };
}

import type { PanelState } from '../../src/shared/protocol';

/**
 * UX "first minute": the three ways in (Open Sample Database, Add Connection…, Set Gemini API Key…), until
 * the user has a connection and a key — and only while there is nothing else to show (no job, no ask,
 * nothing waiting, no rows): under an open job it is noise (issue 15).
 */
export function showGettingStarted(
  state: Pick<
    PanelState,
    'hasProfiles' | 'hasApiKey' | 'jobs' | 'answer' | 'approvals' | 'results' | 'recentAsks' | 'waiting'
  >,
): boolean {
  if (state.hasProfiles && state.hasApiKey) return false;
  return (
    state.jobs.length === 0 &&
    state.answer === null &&
    state.approvals.length === 0 &&
    state.results === null &&
    state.recentAsks.length === 0 &&
    state.waiting.length === 0
  );
}

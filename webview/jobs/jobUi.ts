/**
 * The jobs view's own UI state: which tab is open, whether the plan diff is shown, and the text being
 * typed (feedback, chat). Data always comes from the host's snapshot; this is only what the person is doing.
 */
import { saveUiState, uiState } from '../vscodeApi';

export const JOB_TABS = ['plan', 'todos', 'impact', 'chat', 'activity'] as const;
export type JobTab = (typeof JOB_TABS)[number];

function savedTab(): JobTab {
  const tab = uiState().jobTab;
  return (JOB_TABS as readonly string[]).includes(tab ?? '') ? (tab as JobTab) : 'plan';
}

export const jobUi = {
  tab: savedTab(),
  showPlanDiff: false,
  debugChat: false,
  /** The ticket last seen held, to switch to the Impact tab once when a new write waits. */
  seenTicket: null as string | null,
};

let redraw: () => void = () => undefined;

/** main.ts registers how to draw the panel again from the last snapshot. */
export function onRedraw(draw: () => void): void {
  redraw = draw;
}

export function requestRedraw(): void {
  redraw();
}

export function selectTab(tab: JobTab): void {
  jobUi.tab = tab;
  saveUiState({ jobTab: tab });
  redraw();
}

/**
 * The job views' own UI state: whether the plan diff is shown, the chat's debug switch, the write last seen
 * waiting. Data always comes from the host's snapshot; this is only what the person is doing.
 */

export const jobUi = {
  showPlanDiff: false,
  debugChat: false,
  /** The ticket last seen held, to bring a newly waiting write into view once. */
  seenTicket: null as string | null,
};

let redraw: () => void = () => undefined;

/** The view's main registers how to draw it again from the last snapshot. */
export function onRedraw(draw: () => void): void {
  redraw = draw;
}

export function requestRedraw(): void {
  redraw();
}

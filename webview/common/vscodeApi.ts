/**
 * The one handle on the VS Code webview API of every page (panel, cockpit, collab, results): acquireVsCodeApi may be
 * called only once per page, so it is acquired here, on first use, and each page posts its own message type.
 */
import type { WebviewMessage } from '../../src/shared/panelMessages';

/** What a page keeps across a hide/show of its view: UI choices only, never data (the host owns that). */
export interface UiState {
  /** A cockpit's job: what VS Code hands back to restore the cockpit after a window reload. */
  jobId?: string;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

let api: VsCodeApi | undefined;

function vscode(): VsCodeApi {
  api ??= acquireVsCodeApi();
  return api;
}

/** A page's typed post: `poster<CollabWebviewMessage>()` in the collab view, and so on. */
export function poster<M>(): (message: M) => void {
  return (message) => vscode().postMessage(message);
}

/** The panel's and cockpit's post (their messages share one protocol). */
export const post: (message: WebviewMessage) => void = poster<WebviewMessage>();

export function uiState(): UiState {
  const saved = vscode().getState();
  return saved !== null && typeof saved === 'object' ? saved : {};
}

export function saveUiState(change: Partial<UiState>): void {
  vscode().setState({ ...uiState(), ...change });
}

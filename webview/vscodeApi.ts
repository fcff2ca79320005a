/** The one handle on the VS Code webview API (acquireVsCodeApi may be called only once per page). */
import type { WebviewMessage } from '../src/shared/protocol';

/** What the panel keeps across a hide/show of the view: UI choices only, never data (the host owns that). */
export interface UiState {
  /** A cockpit's job: what VS Code hands back to restore the cockpit after a window reload. */
  jobId?: string;
}

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: UiState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();

export function post(message: WebviewMessage): void {
  api.postMessage(message);
}

export function uiState(): UiState {
  const saved = api.getState();
  return saved !== null && typeof saved === 'object' ? saved : {};
}

export function saveUiState(change: Partial<UiState>): void {
  api.setState({ ...uiState(), ...change });
}

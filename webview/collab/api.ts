/** The session view's one handle on the VS Code webview API (acquired once per page) and its typed intents. */
import type { CollabWebviewMessage } from '../../src/shared/collabProtocol';

interface VsCodeApi {
  postMessage(message: CollabWebviewMessage): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();

export function post(message: CollabWebviewMessage): void {
  api.postMessage(message);
}

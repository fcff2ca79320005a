/**
 * The session view of collaborative planning: an editor webview panel (it needs the room of an editor for
 * analyses side by side). Strict CSP with a random nonce, assets only from dist/ and media/, and every
 * inbound message parsed with collabProtocol's zod schema before the host acts on it.
 */
import * as vscode from 'vscode';
import type { Logger } from '../../core/platform/logger';
import type { CollabHostMessage, CollabIntent, CollabViewState } from '../../shared/collabProtocol';
import { parseCollabMessage } from '../../shared/collabProtocol';
import { openWebviewPanel } from '../ui/webviewPanel';

export const COLLAB_PANEL_TYPE = 'postgresAgent.collabSession';

export class CollabPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private version = 0;
  private state: CollabViewState = { session: null, busy: null, error: null };
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onIntent: (intent: CollabIntent) => void,
    private readonly logger: Logger,
  ) {}

  /** Opens the panel (or brings it forward) in the active editor column. */
  show(): void {
    if (this.panel) {
      this.panel.reveal(undefined, false);
      return;
    }
    const panel = openWebviewPanel(
      this.extensionUri,
      { viewType: COLLAB_PANEL_TYPE, title: 'Plan with Several Models', show: vscode.ViewColumn.Active },
      { styles: ['media/panel.css', 'media/collab.css'], script: 'dist/collab.js' },
    );
    this.panel = panel;
    this.disposables.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidDispose(() => {
        this.panel = undefined;
      }),
    );
  }

  update(change: Partial<CollabViewState>): void {
    this.state = { ...this.state, ...change };
    if (this.panel && this.state.session) this.panel.title = `Plan: ${shorten(this.state.session.task)}`;
    this.post();
  }

  current(): CollabViewState {
    return this.state;
  }

  private receive(raw: unknown): void {
    const parsed = parseCollabMessage(raw);
    if (!parsed.ok) {
      this.logger.warn('ignored a malformed session view message', { reason: parsed.reason });
      return;
    }
    if (parsed.message.type === 'ready') {
      this.post();
      return;
    }
    this.onIntent(parsed.message);
  }

  private post(): void {
    if (!this.panel) return;
    const message: CollabHostMessage = { type: 'state', version: ++this.version, state: this.state };
    void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

function shorten(text: string): string {
  const line = text.split('\n')[0] ?? text;
  return line.length > 40 ? `${line.slice(0, 39)}…` : line;
}

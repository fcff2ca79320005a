/**
 * The review panel (a webview view in the Postgres Agent container): strict CSP with a random nonce,
 * assets only through asWebviewUri from dist/ and media/, every inbound message parsed before use.
 */
import * as vscode from 'vscode';
import type { Logger } from '../../core/platform/logger';
import type { HostMessage, PanelState } from '../../shared/protocol';
import type { JobIntent, PanelCommand } from '../../shared/panelMessages';
import { isJobIntent } from '../../shared/panelMessages';
import { webviewPage } from './webviewPage';
import { assertNever } from '../../shared/protocol';
import { parseWebviewMessage } from '../../shared/panelMessages';

/** The side panel's view id: "reviewPanel" is a contract (package.json, keybindings, E2E), not our word for it. */
export const SIDE_PANEL_VIEW_ID = 'postgresAgent.reviewPanel';

export interface PanelHost {
  /** The current snapshot of everything the panel shows. */
  state(): PanelState;
  onDidChange: vscode.Event<void>;
  /** Called when the panel becomes visible: the moment to open the database if nothing is open yet. */
  panelShown(): void;
  runCommand(command: PanelCommand): void;
  decide(ticketId: string, approve: boolean): Promise<void>;
  openUndo(ticketId: string): Promise<void>;
  openSql(ticketId: string): Promise<void>;
  /** Reviews the safer statement a lint finding of the ticket offers, as a new write with its own ticket. */
  useSaferSql(ticketId: string, rule: string): Promise<void>;
  /** A job intent, already parsed; the host checks it applies to the job as it stands. */
  job(intent: JobIntent): Promise<void>;
  /** A recent ask's result. */
  openAsk(threadId: string): Promise<void>;
}

export class SidePanelProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;

  /** The panel once VS Code has shown it (undefined before). */
  get webviewView(): vscode.WebviewView | undefined {
    return this.view;
  }
  private version = 0;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly viewListeners: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly host: PanelHost,
    private readonly logger: Logger,
  ) {
    this.disposables.push(host.onDidChange(() => this.post()));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [
        vscode.Uri.joinPath(this.extensionUri, 'dist'),
        vscode.Uri.joinPath(this.extensionUri, 'media'),
      ],
    };
    view.webview.html = this.html(view.webview);
    // The view's own listeners go with the view: a view resolved again (moved, reopened) adds none for good.
    this.disposeViewListeners();
    this.viewListeners.push(
      view.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      view.onDidChangeVisibility(() => {
        if (view.visible) this.host.panelShown();
      }),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
        this.disposeViewListeners();
      }),
    );
    this.host.panelShown();
  }

  /**
   * Shows the panel without taking the keyboard from the editor: a held write's CodeLens must appear
   * in the editor the person is looking at, and typing must stay there.
   */
  async reveal(): Promise<void> {
    if (this.view) {
      this.view.show(true);
      return;
    }
    // Not resolved yet: only the focus command can create it; then the keyboard goes back to the editor.
    await vscode.commands.executeCommand(`${SIDE_PANEL_VIEW_ID}.focus`);
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
  }

  private disposeViewListeners(): void {
    for (const listener of this.viewListeners.splice(0).reverse()) listener.dispose();
  }

  private receive(raw: unknown): void {
    const parsed = parseWebviewMessage(raw);
    if (!parsed.ok) {
      this.logger.warn('ignored a malformed panel message', { reason: parsed.reason });
      return;
    }
    const message = parsed.message;
    if (isJobIntent(message)) {
      void this.host.job(message);
      return;
    }
    switch (message.type) {
      case 'ready':
        this.post();
        return;
      case 'runCommand':
        this.host.runCommand(message.command);
        return;
      case 'decide':
        void this.host.decide(message.ticketId, message.approve);
        return;
      case 'openUndo':
        void this.host.openUndo(message.ticketId);
        return;
      case 'openSql':
        void this.host.openSql(message.ticketId);
        return;
      case 'useSaferSql':
        void this.host.useSaferSql(message.ticketId, message.rule);
        return;
      case 'openAsk':
        void this.host.openAsk(message.threadId);
        return;
      default:
        assertNever(message);
    }
  }

  private post(): void {
    if (!this.view) return;
    const message: HostMessage = { type: 'state', version: ++this.version, state: this.host.state() };
    void this.view.webview.postMessage(message);
  }

  private html(webview: vscode.Webview): string {
    return webviewPage(webview, this.extensionUri, { styles: ['media/panel.css'], script: 'dist/webview.js' });
  }

  dispose(): void {
    this.disposeViewListeners();
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

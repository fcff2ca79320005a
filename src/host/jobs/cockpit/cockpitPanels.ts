/**
 * The job cockpit (issue 15): an editor panel per job — plan, todos, the write's impact and the activity on
 * the left, the review chat on the right, the actions the job's state allows at the bottom. One panel per
 * job (opening it again reveals it), restored after a window reload by the serializer. The host owns the
 * job's state and pushes versioned snapshots; every message back is parsed, and acts only on the cockpit's
 * own job and its own held write, through the same host paths as the side panel (one approval path).
 */
import * as vscode from 'vscode';
import type { Logger } from '../../../core/platform/logger';
import type { CockpitHostMessage, CockpitState } from '../../../shared/cockpitProtocol';
import { JOB_ID_PATTERN } from '../../../shared/ids';
import type { JobIntent } from '../../../shared/panelMessages';
import type { CockpitRoutes } from './cockpitRouting';
import { routeCockpitMessage } from './cockpitRouting';
import { fillWebviewPanel, panelOptions } from '../../ui/webviewPanel';

export const COCKPIT_VIEW_TYPE = 'postgresAgent.cockpit';

export interface CockpitHost {
  state(jobId: string): CockpitState;
  onDidChange: vscode.Event<void>;
  /** A cockpit opened / closed on the job: keep reading it while one is open. */
  watch(jobId: string): void;
  unwatch(jobId: string): void;
  /** The person is looking at this job's cockpit: palette commands and the status bar act on it. */
  focused(jobId: string): void;
  /** The job's title as listed (names its tab), if known. */
  title(jobId: string): string | undefined;
  job(intent: JobIntent): Promise<void>;
  decide(ticketId: string, approve: boolean): Promise<void>;
  openSql(ticketId: string): Promise<void>;
  openUndo(ticketId: string): Promise<void>;
  useSaferSql(ticketId: string, rule: string): Promise<void>;
}

interface Cockpit {
  panel: vscode.WebviewPanel;
  version: number;
  listeners: vscode.Disposable[];
}

const TITLE_SHOWN = 32;
/** A cockpit finds text (Ctrl+F) in its plan and chat. */
const COCKPIT_OPTIONS = (extensionUri: vscode.Uri) => panelOptions(extensionUri, { enableFindWidget: true });

function tabTitle(title: string): string {
  return title.length > TITLE_SHOWN ? `${title.slice(0, TITLE_SHOWN - 1)}…` : title;
}

export class CockpitPanels implements vscode.WebviewPanelSerializer, vscode.Disposable {
  private readonly cockpits = new Map<string, Cockpit>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly host: CockpitHost,
    private readonly logger: Logger,
  ) {
    this.disposables.push(
      host.onDidChange(() => this.postAll()),
      vscode.window.registerWebviewPanelSerializer(COCKPIT_VIEW_TYPE, this),
    );
  }

  /** Opens the job's cockpit, or reveals it when it is open already. */
  async open(jobId: string, options: { preserveFocus?: boolean } = {}): Promise<void> {
    const open = this.cockpits.get(jobId);
    if (open) {
      open.panel.reveal(open.panel.viewColumn, options.preserveFocus ?? false);
      return;
    }
    await this.closeUnrestored(jobId);
    const panel = vscode.window.createWebviewPanel(
      COCKPIT_VIEW_TYPE,
      'Job',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: options.preserveFocus ?? false },
      COCKPIT_OPTIONS(this.extensionUri),
    );
    this.adopt(jobId, panel);
  }

  /**
   * After a reload VS Code restores a cockpit only when its tab is first shown; opening the job before that
   * would leave two tabs of it. The tab kept for the job (same view type and title) is closed first.
   */
  private async closeUnrestored(jobId: string): Promise<void> {
    const title = this.host.title(jobId);
    if (title === undefined) return;
    const label = tabTitle(title);
    const kept = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter(
        (tab) =>
          tab.input instanceof vscode.TabInputWebview &&
          tab.input.viewType.endsWith(COCKPIT_VIEW_TYPE) &&
          tab.label === label,
      );
    if (kept.length > 0) await vscode.window.tabGroups.close(kept, true);
  }

  /** The job's cockpit is the editor in front of the person. */
  isShown(jobId: string): boolean {
    const panel = this.cockpits.get(jobId)?.panel;
    return panel !== undefined && panel.visible && panel.active;
  }

  /** The job of the cockpit the person is looking at, if any. */
  activeJob(): string | undefined {
    for (const [jobId, { panel }] of this.cockpits) if (panel.active) return jobId;
    return undefined;
  }

  /** After a window reload: the panel VS Code kept, with the state the cockpit saved (its job id). */
  deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Thenable<void> {
    const jobId = typeof state === 'object' && state !== null ? (state as { jobId?: unknown }).jobId : undefined;
    if (typeof jobId !== 'string' || !JOB_ID_PATTERN.test(jobId) || this.cockpits.has(jobId)) {
      this.logger.warn('a cockpit could not be restored; closed', { state: JSON.stringify(state).slice(0, 120) });
      panel.dispose();
      return Promise.resolve();
    }
    panel.webview.options = COCKPIT_OPTIONS(this.extensionUri);
    this.adopt(jobId, panel);
    return Promise.resolve();
  }

  private adopt(jobId: string, panel: vscode.WebviewPanel): void {
    fillWebviewPanel(this.extensionUri, panel, {
      styles: ['media/panel.css', 'media/cockpit.css'],
      script: 'dist/cockpit.js',
    });
    const cockpit: Cockpit = { panel, version: 0, listeners: [] };
    this.cockpits.set(jobId, cockpit);
    cockpit.listeners.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(jobId, raw)),
      panel.onDidChangeViewState(() => {
        if (panel.active) this.host.focused(jobId);
      }),
      panel.onDidDispose(() => {
        if (this.cockpits.get(jobId) === cockpit) this.cockpits.delete(jobId);
        for (const l of cockpit.listeners.splice(0).reverse()) l.dispose();
        this.host.unwatch(jobId);
      }),
    );
    this.retitle(jobId, cockpit);
    this.host.watch(jobId);
    if (panel.active) this.host.focused(jobId);
  }

  private receive(jobId: string, raw: unknown): void {
    const routes: CockpitRoutes = {
      ready: () => this.post(jobId),
      shownTicket: () => this.host.state(jobId).job?.approval?.ticketId,
      job: (intent) => this.host.job(intent),
      decide: (ticketId, approve) => this.host.decide(ticketId, approve),
      openSql: (ticketId) => this.host.openSql(ticketId),
      openUndo: (ticketId) => this.host.openUndo(ticketId),
      useSaferSql: (ticketId, rule) => this.host.useSaferSql(ticketId, rule),
    };
    void routeCockpitMessage(raw, jobId, routes, this.logger);
  }

  private postAll(): void {
    for (const jobId of this.cockpits.keys()) this.post(jobId);
  }

  private post(jobId: string): void {
    const cockpit = this.cockpits.get(jobId);
    if (!cockpit) return;
    const message: CockpitHostMessage = { type: 'cockpit', version: ++cockpit.version, state: this.host.state(jobId) };
    this.retitle(jobId, cockpit, message.state);
    void cockpit.panel.webview.postMessage(message);
  }

  private retitle(jobId: string, cockpit: Cockpit, state: CockpitState = this.host.state(jobId)): void {
    const title = state.job?.title ?? this.host.title(jobId);
    const text = title === undefined ? 'Job' : tabTitle(title);
    if (cockpit.panel.title !== text) cockpit.panel.title = text;
  }

  dispose(): void {
    for (const { panel } of [...this.cockpits.values()]) panel.dispose();
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

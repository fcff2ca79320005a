/**
 * Results where results belong (issue 15): an editor-area panel with a tab per result, like the results
 * grid of SQL editors. Reads of Run SQL with Review, Ask answers with rows and `postgresAgent.
 * showQueryResults` (the schema explorer's Select First 100 Rows) open here. Decision: one panel with
 * tabs inside it rather than an editor per result — a person compares a few results side by side with the
 * panel's own tabs and keeps the editor area for SQL; the last 20 results are kept, oldest dropped.
 * Copy and export use the host's own copy of the rows (the webview only says which).
 */
import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import { toCsv } from '../../shared/csv';
import type { ResultsView } from '../../shared/protocol';
import type { ResultsHostMessage, ResultsWebviewMessage } from '../../shared/resultsProtocol';
import { cellText } from '../../shared/resultsGrid';
import { RESULTS_WEBVIEW_MESSAGE } from '../../shared/resultsProtocol';
import { GRID_EDIT_WEBVIEW_MESSAGE } from '../../shared/gridEditProtocol';
import type { GridEditHostMessage } from '../../shared/gridEditProtocol';
import type { GridEditing } from './gridEditing';
import type { Logger } from '../../core/platform/logger';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';
import type { SafetySettings } from '../../core/sql/safetySettings';
import { openWebviewPanel } from '../ui/webviewPanel';

export const RESULTS_PANEL_TYPE = 'postgresAgent.results';
const KEPT = 20;

interface Tab {
  id: string;
  title: string;
  result: ResultsView;
  /** What the rows are of, when a later showing of the same thing replaces the tab (`ask:<threadId>`). */
  key?: string;
}

/** What the results grid needs of the core (built in host/compose/schemaPorts.ts). */
export interface ResultsPanelPort extends Pick<CoreServices, 'readToExplain' | 'runRead' | 'toAgentError'> {
  /** The safety settings in force for this read (its row and time limits). */
  safetySettings(): Promise<SafetySettings>;
}

export class ResultsPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private tabs: Tab[] = [];
  private active: string | null = null;
  private counter = 0;
  private version = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly port: ResultsPanelPort,
    private readonly extensionUri: vscode.Uri,
    private readonly session: DatabaseSession,
    private readonly workspaceDir: string | undefined,
    private readonly logger: Logger,
    /** Edit in the grid (issue 33): its own protocol, routed here. */
    private readonly editing?: GridEditing,
  ) {
    this.disposables.push(
      vscode.commands.registerCommand('postgresAgent.showQueryResults', (arg?: unknown) => this.runAndShow(arg)),
      vscode.commands.registerCommand('postgresAgent.showResults', () => this.showLatest()),
      vscode.commands.registerCommand('postgresAgent.exportResultCsv', () => this.export('csv')),
      vscode.commands.registerCommand('postgresAgent.exportResultJson', () => this.export('json')),
    );
  }

  /**
   * Opens `result` in a new tab and shows the panel (beside the SQL, not over it); a tab of the same `key`
   * (an ask shown again) is replaced rather than kept twice.
   */
  show(result: ResultsView, title: string, key?: string): void {
    const id = `r${++this.counter}`;
    this.tabs = [
      ...this.tabs.filter((t) => key === undefined || t.key !== key),
      { id, title, result, ...(key !== undefined ? { key } : {}) },
    ].slice(-KEPT);
    this.display(id);
  }

  /** Shows the panel with the tab last active (the side panel's "Show rows" of a read). */
  private showLatest(): void {
    if (this.tabs.length === 0) {
      void vscode.window.showInformationMessage(
        'No results yet: run a read (Run SQL with Review, Select First 100 Rows, Ask…) and its rows open here.',
      );
      return;
    }
    this.display(this.active ?? this.tabs.at(-1)?.id ?? null);
  }

  /** Shows the kept tab of `key` again; false when it is not kept (closed, or dropped as older than the last 20). */
  reveal(key: string): boolean {
    const tab = this.tabs.find((t) => t.key === key);
    if (!tab) return false;
    this.display(tab.id);
    return true;
  }

  /** Shows the panel with tab `id` active. */
  private display(id: string | null): void {
    this.active = id;
    this.ensurePanel();
    this.post();
  }

  /** One plain SELECT (the same check as Explain), run READ ONLY with the read limits. */
  async read(sql: string): Promise<ResultsView> {
    const statement = await this.port.readToExplain(sql);
    const settings = await this.port.safetySettings();
    const result = await this.session.use(({ db }) =>
      this.port.runRead(db, statement.sql, true, {
        maxRows: settings.maxRows,
        statementTimeoutMs: settings.statementTimeoutMs,
        lockTimeoutMs: settings.lockTimeoutMs,
      }),
    );
    const { fields, rows, rowCount, truncated, elapsedMs } = result;
    return { sql, fields, rows, rowCount, truncated, elapsedMs };
  }

  /** `{ sql, title? }`: one plain SELECT, run READ ONLY with the read limits, shown in a new tab. */
  private async runAndShow(arg: unknown): Promise<void> {
    const request = typeof arg === 'object' && arg !== null ? (arg as { sql?: unknown; title?: unknown }) : {};
    const sql = typeof request.sql === 'string' ? request.sql : '';
    const title = typeof request.title === 'string' ? request.title : sql.slice(0, 40);
    try {
      this.show(await this.read(sql), title);
    } catch (error) {
      const e = this.port.toAgentError(error);
      this.logger.warn('showQueryResults refused or failed', { code: e.code, error: e.message });
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
    }
  }

  private ensurePanel(): void {
    if (this.panel) {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
      return;
    }
    const panel = openWebviewPanel(
      this.extensionUri,
      {
        viewType: RESULTS_PANEL_TYPE,
        title: 'Results',
        show: { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      },
      { styles: ['media/results.css'], script: 'dist/results.js' },
    );
    this.panel = panel;
    const listeners = [
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidDispose(() => {
        this.panel = undefined;
        for (const l of listeners) l.dispose();
      }),
    ];
  }

  private receive(raw: unknown): void {
    const edit = this.editing ? GRID_EDIT_WEBVIEW_MESSAGE.safeParse(raw) : undefined;
    if (edit?.success && this.editing) {
      void this.editing.handle(edit.data, {
        result: (id) => this.tabs.find((t) => t.id === id)?.result,
        replace: (id, result) => {
          const tab = this.tabs.find((t) => t.id === id);
          if (tab) tab.result = result;
          this.post();
        },
        post: (message: GridEditHostMessage) => void this.panel?.webview.postMessage(message),
      });
      return;
    }
    const parsed = RESULTS_WEBVIEW_MESSAGE.safeParse(raw);
    if (!parsed.success) {
      this.logger.warn('ignored a malformed results view message', {
        reason: parsed.error.issues[0]?.message ?? 'invalid',
      });
      return;
    }
    void this.handle(parsed.data);
  }

  private async handle(message: ResultsWebviewMessage): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.post();
        return;
      case 'selectTab':
        if (this.tabs.some((t) => t.id === message.id)) this.active = message.id;
        this.post();
        return;
      case 'closeTab':
        this.tabs = this.tabs.filter((t) => t.id !== message.id);
        if (this.active === message.id) this.active = this.tabs.at(-1)?.id ?? null;
        this.post();
        return;
      case 'export':
        await this.export(message.format);
        return;
      case 'copy':
        await this.copy(message.what, message.row, message.column);
        return;
      default: {
        const unexpected: never = message;
        this.logger.warn('unknown results view message', { message: JSON.stringify(unexpected) });
      }
    }
  }

  private current(): Tab | undefined {
    return this.tabs.find((t) => t.id === this.active);
  }

  private async copy(what: 'cell' | 'row' | 'column', row: number, column: number): Promise<void> {
    const tab = this.current();
    if (!tab) return;
    const { rows, fields } = tab.result;
    const text =
      what === 'cell'
        ? cellText(rows[row]?.[column])
        : what === 'row'
          ? (rows[row] ?? []).map(cellText).join('\t')
          : [fields[column]?.name ?? '', ...rows.map((r) => cellText(r[column]))].join('\n');
    await vscode.env.clipboard.writeText(text);
    void vscode.window.setStatusBarMessage(`Postgres Agent: copied the ${what}`, 3000);
  }

  private async export(format: 'csv' | 'json'): Promise<void> {
    const tab = this.current();
    if (!tab) {
      void vscode.window.showWarningMessage('There are no results to export.');
      return;
    }
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.file(`${this.workspaceDir ?? ''}/results.${format}`),
      filters: format === 'csv' ? { CSV: ['csv'] } : { JSON: ['json'] },
      title: `Export "${tab.title}" as ${format.toUpperCase()}`,
    });
    if (!target) return;
    const { fields, rows } = tab.result;
    const names = fields.map((f) => f.name);
    const text =
      format === 'csv'
        ? toCsv(names, rows)
        : `${JSON.stringify(
            rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i] ?? null]))),
            null,
            2,
          )}\n`;
    await writeFile(target.fsPath, text, 'utf8');
    void vscode.window.showInformationMessage(
      `Exported ${tab.result.rowCount.toLocaleString('en-US')} rows to ${target.fsPath}${tab.result.truncated ? ' (the rows shown: the query had more than the row cap)' : ''}.`,
    );
  }

  private post(): void {
    if (!this.panel) return;
    const tab = this.current();
    this.panel.title = tab ? `Results: ${tab.title}` : 'Results';
    const message: ResultsHostMessage = {
      type: 'results',
      version: ++this.version,
      tabs: this.tabs.map(({ id, title }) => ({ id, title })),
      active: this.active,
      result: tab?.result ?? null,
    };
    void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

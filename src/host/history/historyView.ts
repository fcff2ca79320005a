/**
 * The History view: the newest statements of each database that ran through pg-agent here (VS Code, the CLI, MCP
 * agents, the guard), newest first, from `.pgagent/history/`. A filter (title button, or "Query History…") searches
 * them; "Run Again" sends a statement back through Run SQL with Review — a read runs read-only into the results
 * grid, a write is held on a new ticket at the inline approval (never run from here); "Copy SQL".
 * Lazy: nothing is read until the view is shown, then only the end of each file (core HistoryTail); a file watcher
 * refreshes it (debounced) while it is visible, and once when it is shown again after a change.
 */
import * as vscode from 'vscode';
import { mkdirSync } from 'node:fs';
import { relative, sep } from 'node:path';
import type { HistoryEntry } from '../../core/sql/history/historyEntry';
import type { DatabaseHistory, HistoryTail } from '../../core/sql/history/historyTail';
import type { RunAgain } from '../../core/sql/history/runAgain';
import type { HistoryNode } from './historyItems';
import { historyTreeItem, statementNodes } from './historyItems';

export const HISTORY_VIEW_ID = 'postgresAgent.history';
export const HISTORY_COMMANDS = {
  filter: 'postgresAgent.history.filter',
  clearFilter: 'postgresAgent.history.clearFilter',
  refresh: 'postgresAgent.history.refresh',
  runAgain: 'postgresAgent.history.runAgain',
  copySql: 'postgresAgent.history.copySql',
} as const;
const FILTERED_CONTEXT = 'postgresAgent.historyFiltered';
const REFRESH_DELAY_MS = 300;

/** What the view needs, built by the composition root (compose/historyViewPort.ts). */
export interface HistoryViewPort {
  /** The folder of the history files. */
  historyDir: string;
  /** The reader of the files' ends (the core, loaded on first use: only once the view is shown). */
  tail(): HistoryTail;
  /** The active database's history key (opens the connection if needed). */
  activeDatabase(): Promise<string>;
  runAgainOf(entry: HistoryEntry, activeDatabase: string): RunAgain;
  /** Run SQL with Review on `sql` in a new editor: a read shows its rows, a write is held on a new ticket. */
  review(sql: string): Promise<void>;
  showError(error: unknown): Promise<void>;
}

export class HistoryView implements vscode.TreeDataProvider<HistoryNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<HistoryNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<HistoryNode>;
  private readonly disposables: vscode.Disposable[] = [];
  private watcher: vscode.FileSystemWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** A file changed while the view was hidden: read again when it shows. */
  private stale = false;
  private filter = '';

  constructor(private readonly port: HistoryViewPort) {
    this.view = vscode.window.createTreeView(HISTORY_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.changed,
      this.view.onDidChangeVisibility(({ visible }) => {
        if (!visible) return;
        this.watch();
        if (this.stale) this.refresh();
      }),
      vscode.commands.registerCommand(HISTORY_COMMANDS.filter, () => this.askFilter()),
      vscode.commands.registerCommand(HISTORY_COMMANDS.clearFilter, () => this.setFilter('')),
      vscode.commands.registerCommand(HISTORY_COMMANDS.refresh, () => this.refresh()),
      vscode.commands.registerCommand(HISTORY_COMMANDS.runAgain, (node?: HistoryNode) => this.runAgainNode(node)),
      vscode.commands.registerCommand(HISTORY_COMMANDS.copySql, (node?: HistoryNode) => this.copyNode(node)),
    );
    if (this.view.visible) this.watch();
  }

  getTreeItem(node: HistoryNode): vscode.TreeItem {
    return historyTreeItem(node);
  }

  async getChildren(node?: HistoryNode): Promise<HistoryNode[]> {
    if (node?.kind === 'database') return statementNodes(node.database.entries);
    if (node) return [];
    this.stale = false;
    try {
      const databases = await this.port.tail().read(this.filter);
      this.describe(databases);
      const shown = this.filter === '' ? databases : databases.filter((d) => d.entries.length > 0);
      // The newest database open; all of them while searching (what matched is what was asked for).
      return shown.map((database, index) => ({
        kind: 'database',
        database,
        expanded: index === 0 || this.filter !== '' || shown.length <= 3,
      }));
    } catch (error) {
      this.view.message = 'The query history could not be read (see the Postgres Agent output).';
      await this.port.showError(error);
      return [];
    }
  }

  /** Shows the view and asks for its filter ("Query History…"). */
  async show(): Promise<void> {
    await vscode.commands.executeCommand(`${HISTORY_VIEW_ID}.focus`);
    await this.askFilter();
  }

  refresh(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.changed.fire(undefined);
  }

  /** Runs a statement again through Run SQL with Review (see the file's comment). */
  async runAgain(entry: HistoryEntry): Promise<void> {
    try {
      const active = await this.port.activeDatabase();
      const plan = this.port.runAgainOf(entry, active);
      if (plan.kind === 'refused') {
        void vscode.window.showErrorMessage(plan.reason);
        return;
      }
      if (plan.otherDatabase !== undefined) {
        const here = `Run on ${active}`;
        const choice = await vscode.window.showWarningMessage(
          `This statement ran on ${plan.otherDatabase}. Run it again on the active connection, ${active}?`,
          {
            modal: true,
            detail:
              entry.kind === 'write'
                ? 'It is checked again there: a write is held on a new ticket for your approval.'
                : 'It runs read-only.',
          },
          here,
        );
        if (choice !== here) return;
      }
      await this.port.review(plan.sql);
    } catch (error) {
      await this.port.showError(error);
    }
  }

  private describe(databases: DatabaseHistory[]): void {
    const scanned = databases.reduce((n, d) => n + d.scanned, 0);
    if (this.filter === '') {
      this.view.description = undefined;
      this.view.message =
        databases.length === 0
          ? 'No statements yet. What runs through Postgres Agent here (VS Code, pg-agent, MCP agents, the guard) is listed by database.'
          : undefined;
      return;
    }
    const matched = databases.reduce((n, d) => n + d.entries.length, 0);
    const older = databases.some((d) => d.more) ? ' Older ones: pg-agent history --grep.' : '';
    this.view.description = `filter: ${this.filter}`;
    this.view.message = `${matched.toLocaleString('en-US')} of the newest ${scanned.toLocaleString('en-US')} statements match “${this.filter}”.${older}`;
  }

  private async askFilter(): Promise<void> {
    const text = await vscode.window.showInputBox({
      title: 'Filter the query history',
      prompt: 'Text the SQL, person, origin, ticket or error contains (empty shows everything)',
      placeHolder: 'e.g. orders, DELETE, tkt_, alice',
      value: this.filter,
    });
    if (text !== undefined) this.setFilter(text.trim());
  }

  private setFilter(text: string): void {
    this.filter = text;
    void vscode.commands.executeCommand('setContext', FILTERED_CONTEXT, text !== '');
    this.refresh();
  }

  /** The statement of a command's argument: the clicked node, else the selected one. */
  private statementOf(node: HistoryNode | undefined): HistoryEntry | undefined {
    const target = node ?? this.view.selection[0];
    return target?.kind === 'statement' ? target.entry : undefined;
  }

  private async runAgainNode(node: HistoryNode | undefined): Promise<void> {
    const entry = this.statementOf(node);
    if (entry) await this.runAgain(entry);
  }

  private async copyNode(node: HistoryNode | undefined): Promise<void> {
    const entry = this.statementOf(node);
    if (!entry) return;
    await vscode.env.clipboard.writeText(entry.sql);
    if (entry.sqlTruncated === true)
      void vscode.window.showWarningMessage('Copied the start of the SQL only: it was longer than the history keeps.');
    else vscode.window.setStatusBarMessage('SQL copied', 3000);
  }

  /** The file watcher, from the first time the view shows (nothing is watched before). */
  private watch(): void {
    if (this.watcher) return;
    // Inside the workspace, the workspace's own watcher sees the folder even before it exists.
    const dir = vscode.Uri.file(this.port.historyDir);
    const folder = vscode.workspace.getWorkspaceFolder(dir);
    const pattern = folder
      ? new vscode.RelativePattern(folder, `${relative(folder.uri.fsPath, dir.fsPath).split(sep).join('/')}/*.jsonl`)
      : new vscode.RelativePattern(dir, '*.jsonl');
    // Outside the workspace the folder is watched itself: it must exist (the history creates it 0700 too).
    try {
      if (!folder) mkdirSync(dir.fsPath, { recursive: true, mode: 0o700 });
    } catch (error) {
      void this.port.showError(error);
    }
    this.watcher = vscode.workspace.createFileSystemWatcher(pattern);
    const onChange = () => this.fileChanged();
    this.disposables.push(
      this.watcher,
      this.watcher.onDidChange(onChange),
      this.watcher.onDidCreate(onChange),
      this.watcher.onDidDelete(onChange),
    );
  }

  private fileChanged(): void {
    if (!this.view.visible) {
      this.stale = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => this.refresh(), REFRESH_DELAY_MS);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

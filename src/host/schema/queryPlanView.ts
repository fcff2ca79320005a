/**
 * Explain Query (issue 15): the plan of a read as a native tree in the bottom panel — each node with its
 * estimated cost, rows and own share of the plan, the node that dominates marked with a flame. The plan
 * comes from EXPLAIN (FORMAT JSON) in a READ ONLY transaction, never ANALYZE; anything but one plain read
 * is refused with what to do instead (core/sql/explainPlan.ts).
 */
import * as vscode from 'vscode';
import type { Logger } from '../../core/platform/logger';
import type { PlanNode } from '../../core/sql/explainPlan';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';
import type { SafetySettings } from '../../core/sql/safetySettings';

export const QUERY_PLAN_VIEW_ID = 'postgresAgent.queryPlan';

const number = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));

/** What Explain Query needs of the core (built in host/compose/schemaPorts.ts). */
export interface QueryPlanPort extends Pick<CoreServices, 'explainRead' | 'toAgentError'> {
  /** The safety settings in force for this EXPLAIN. */
  safetySettings(): Promise<SafetySettings>;
  /** An error shown with its advice and logged in the output channel. */
  showError(error: unknown): Promise<void>;
}

export class QueryPlanView implements vscode.TreeDataProvider<PlanNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<PlanNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private root: PlanNode | undefined;
  private readonly view: vscode.TreeView<PlanNode>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly port: QueryPlanPort,
    private readonly session: DatabaseSession,
    private readonly logger: Logger,
  ) {
    this.view = vscode.window.createTreeView(QUERY_PLAN_VIEW_ID, { treeDataProvider: this });
    this.disposables.push(
      this.view,
      this.changed,
      vscode.commands.registerCommand('postgresAgent.explainQuery', () => this.explain()),
    );
  }

  getTreeItem(node: PlanNode): vscode.TreeItem {
    const item = new vscode.TreeItem(
      node.label,
      node.children.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
    );
    const share = `${Math.round(node.share * 100)} % of the plan`;
    item.description = `${node.dominant ? 'most expensive · ' : ''}cost ${number(node.totalCost)} · ~${number(node.rows)} rows · ${share}`;
    item.tooltip = new vscode.MarkdownString(
      [
        `**${node.label}**`,
        node.detail ? `\n\n${node.detail}` : '',
        `\n\nestimated cost ${number(node.startupCost)}..${number(node.totalCost)} (own ${number(node.selfCost)}, ${share}), ~${number(node.rows)} rows`,
      ].join(''),
    );
    item.iconPath = new vscode.ThemeIcon(
      node.dominant ? 'flame' : node.children.length > 0 ? 'git-merge' : 'database',
      node.dominant ? new vscode.ThemeColor('charts.orange') : undefined,
    );
    item.accessibilityInformation = { label: `${node.label}, ${item.description}` };
    return item;
  }

  getChildren(node?: PlanNode): PlanNode[] {
    if (!node) return this.root ? [this.root] : [];
    return node.children;
  }

  /** The selection of the active SQL editor (or its whole text), explained on the open database. */
  private async explain(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const sql = editor
      ? (editor.selection.isEmpty ? editor.document.getText() : editor.document.getText(editor.selection)).trim()
      : '';
    if (!sql) {
      void vscode.window.showInformationMessage(
        'Explain Query explains the selected query (or the whole file) of the active editor: open a .sql file first.',
      );
      return;
    }
    try {
      const settings = await this.port.safetySettings();
      const plan = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Postgres Agent: explaining…' },
        () => this.session.use(({ db }) => this.port.explainRead(db, sql, settings)),
      );
      this.root = plan;
      this.view.message = `${sql.replace(/\s+/g, ' ').slice(0, 100)}${sql.length > 100 ? '…' : ''} — estimated, not run (EXPLAIN without ANALYZE)`;
      this.changed.fire(undefined);
      await vscode.commands.executeCommand(`${QUERY_PLAN_VIEW_ID}.focus`);
      this.logger.info('query explained', { nodes: count(plan), totalCost: plan.totalCost });
    } catch (error) {
      const e = this.port.toAgentError(error);
      this.logger.warn('explain refused or failed', { code: e.code, error: e.message });
      // The SQL itself is the problem (not a read, several statements, a syntax error): no connection advice.
      if (e.code === 'SQL_REFUSED' || e.code === 'BAD_INPUT' || e.code === 'SQL_SYNTAX')
        void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
      else await this.port.showError(error);
    }
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

function count(node: PlanNode): number {
  return 1 + node.children.reduce((sum, c) => sum + count(c), 0);
}

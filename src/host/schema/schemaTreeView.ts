/**
 * The schema explorer (issue 15): a native TreeView under the Postgres Agent activity bar icon. The tree
 * is computed per level from the window's schema snapshot (core/db/schemaTree.ts, no query of its own),
 * refreshed when the connection or the schema changes; context menu: Ask about this table, Select first
 * 100 rows, Show DDL, Copy name; a filter in the title bar keeps 5,000-table schemas usable.
 */
import * as vscode from 'vscode';
import type { SchemaTreeNode } from '../../core/db/schemaTree';
import type { Logger } from '../../core/platform/logger';
import type { SchemaSnapshot } from '../../shared/schema';
import { qualifiedName } from '../../shared/sqlNames';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';

export const SCHEMA_TREE_VIEW_ID = 'postgresAgent.schemaTree';
const FILTERED_CONTEXT = 'postgresAgent.schemaTreeFiltered';
/** Whether a database is open: the view's welcome (Open Sample Database, Select Connection…) shows until one is. */
const OPEN_CONTEXT = 'postgresAgent.databaseOpen';
/** The command other views (the results view) provide to run a read and show its rows; the fallback is Run SQL with Review. */
const SHOW_QUERY_RESULTS = 'postgresAgent.showQueryResults';

const ICONS: Record<string, string> = {
  key: 'key',
  'foreign-key': 'references',
  index: 'list-ordered',
  trigger: 'zap',
};

/** What the Schema tree needs of the core (built in host/compose/schemaPorts.ts). */
export type SchemaTreePort = Pick<CoreServices, 'schemaTreeChildren' | 'selectFirstRows' | 'tableDdlText'>;

export class SchemaTreeView implements vscode.TreeDataProvider<SchemaTreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SchemaTreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private filter = '';
  private readonly view: vscode.TreeView<SchemaTreeNode>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly port: SchemaTreePort,
    private readonly session: DatabaseSession,
    private readonly logger: Logger,
  ) {
    this.view = vscode.window.createTreeView(SCHEMA_TREE_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.changed,
      session.onDidChange(() => {
        void vscode.commands.executeCommand('setContext', OPEN_CONTEXT, session.connection.status === 'connected');
        this.changed.fire(undefined);
      }),
      vscode.commands.registerCommand('postgresAgent.schemaTree.filter', () => this.askFilter()),
      vscode.commands.registerCommand('postgresAgent.schemaTree.clearFilter', () => this.setFilter('')),
      vscode.commands.registerCommand('postgresAgent.schemaTree.refresh', () => this.refresh()),
      vscode.commands.registerCommand('postgresAgent.selectFirstRows', (node?: SchemaTreeNode) =>
        this.selectFirstRows(node),
      ),
      vscode.commands.registerCommand('postgresAgent.showTableDdl', (node?: SchemaTreeNode) => this.showDdl(node)),
      vscode.commands.registerCommand('postgresAgent.copyTableName', (node?: SchemaTreeNode) => this.copyName(node)),
      vscode.commands.registerCommand('postgresAgent.askAboutTable', (node?: SchemaTreeNode) => this.askAbout(node)),
    );
    this.updateMessage();
  }

  /** The tree view itself (the approvals badge shows on it until the side panel has been shown). */
  get treeView(): vscode.TreeView<SchemaTreeNode> {
    return this.view;
  }

  getTreeItem(node: SchemaTreeNode): vscode.TreeItem {
    const collapsed = vscode.TreeItemCollapsibleState.Collapsed;
    switch (node.kind) {
      case 'schema':
        return Object.assign(
          new vscode.TreeItem(node.schema, this.filter ? vscode.TreeItemCollapsibleState.Expanded : collapsed),
          {
            description: `${node.tables} table${node.tables === 1 ? '' : 's'}`,
            iconPath: new vscode.ThemeIcon('symbol-namespace'),
            contextValue: 'schema',
          },
        );
      case 'table': {
        const view = node.relation === 'view' || node.relation === 'materialized_view';
        return Object.assign(new vscode.TreeItem(node.name, collapsed), {
          id: `table:${node.schema}.${node.name}`,
          description: node.description,
          tooltip: node.tooltip,
          iconPath: new vscode.ThemeIcon(view ? 'eye' : 'table'),
          contextValue: view ? 'view' : 'table',
          accessibilityInformation: {
            label: `${view ? 'view' : 'table'} ${node.schema}.${node.name}${node.description ? `, ${node.description}` : ''}`,
          },
        });
      }
      case 'group':
        return Object.assign(
          new vscode.TreeItem(
            node.group === 'keys' ? 'Keys' : node.group === 'indexes' ? 'Indexes' : 'Triggers',
            collapsed,
          ),
          {
            description: String(node.count),
            iconPath: new vscode.ThemeIcon('list-tree'),
            contextValue: 'group',
          },
        );
      case 'column':
        return Object.assign(new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None), {
          description: node.description,
          tooltip: node.tooltip,
          iconPath: new vscode.ThemeIcon('symbol-field'),
          contextValue: 'column',
        });
      case 'detail':
        return Object.assign(new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None), {
          description: node.description,
          tooltip: node.tooltip,
          iconPath: new vscode.ThemeIcon(ICONS[node.icon] ?? 'circle-small'),
          contextValue: node.icon,
        });
      case 'more':
        return Object.assign(
          new vscode.TreeItem(`${node.hidden} more — refine the filter`, vscode.TreeItemCollapsibleState.None),
          {
            iconPath: new vscode.ThemeIcon('filter'),
            command: { command: 'postgresAgent.schemaTree.filter', title: 'Filter Tables…' },
            contextValue: 'more',
          },
        );
      default: {
        const unexpected: never = node;
        throw new Error(`unknown tree node ${JSON.stringify(unexpected)}`);
      }
    }
  }

  async getChildren(node?: SchemaTreeNode): Promise<SchemaTreeNode[]> {
    const snapshot = await this.snapshot();
    return snapshot ? this.port.schemaTreeChildren(snapshot, node, this.filter) : [];
  }

  /** A table's parent is its schema (what `reveal` needs); other nodes are not revealed. */
  async getParent(node: SchemaTreeNode): Promise<SchemaTreeNode | undefined> {
    if (node.kind !== 'table') return undefined;
    const snapshot = await this.snapshot();
    const count = snapshot?.tables.filter((t) => t.schema === node.schema && !t.partitionOf).length ?? 0;
    return { kind: 'schema', schema: node.schema, tables: count };
  }

  /** Selects and shows a table's node (the schema diagram's click); a filter that hides it is cleared first. */
  async revealTable(schema: string, name: string): Promise<void> {
    const snapshot = await this.snapshot();
    if (!snapshot) return;
    // Beyond the first LEVEL_LIMIT tables of a schema a node is only reachable through the filter.
    const find = (filter: string) =>
      this.port
        .schemaTreeChildren(snapshot, { kind: 'schema', schema, tables: 0 }, filter)
        .find((n) => n.kind === 'table' && n.name === name);
    const filter = find('') ? '' : `${schema}.${name}`;
    if (this.filter !== filter) this.setFilter(filter);
    const node = find(filter);
    if (node) await this.view.reveal(node, { select: true, focus: false, expand: false });
  }

  /** The snapshot when a database is open (the tree never opens one by itself). */
  private async snapshot(): Promise<SchemaSnapshot | undefined> {
    if (this.session.connection.status !== 'connected') return undefined;
    try {
      return await this.session.loadSnapshot();
    } catch (error) {
      this.logger.warn('schema explorer: the schema could not be read', { error: String(error) });
      this.view.message = `The schema could not be read: ${error instanceof Error ? error.message : String(error)}`;
      return undefined;
    }
  }

  private updateMessage(): void {
    this.view.message = this.filter ? `Filter: "${this.filter}" (Clear Filter in the title bar)` : undefined;
    void vscode.commands.executeCommand('setContext', FILTERED_CONTEXT, this.filter !== '');
  }

  private async askFilter(): Promise<void> {
    const value = await vscode.window.showInputBox({
      title: 'Filter Tables',
      prompt: 'Tables whose name holds this text (schema.table works too)',
      value: this.filter,
      placeHolder: 'e.g. order',
    });
    if (value !== undefined) this.setFilter(value.trim());
  }

  private setFilter(filter: string): void {
    this.filter = filter;
    this.updateMessage();
    this.changed.fire(undefined);
  }

  private async refresh(): Promise<void> {
    await this.session.forgetSchema();
    this.changed.fire(undefined);
  }

  /** The table a command acts on: the node it was invoked on, else the selection, else one picked by name. */
  private async tableOf(node: SchemaTreeNode | undefined): Promise<{ schema: string; name: string } | undefined> {
    const candidate = node ?? this.view.selection[0];
    if (candidate?.kind === 'table') return candidate;
    const snapshot = await this.snapshot();
    if (!snapshot) {
      void vscode.window.showInformationMessage(
        'Open a database first: Postgres Agent: Open Sample Database, or Select Connection…',
      );
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      snapshot.tables.map((t) => ({ label: qualifiedName(t.schema, t.name), table: t })),
      { title: 'Postgres Agent: which table?', matchOnDescription: true },
    );
    return picked ? { schema: picked.table.schema, name: picked.table.name } : undefined;
  }

  private async selectFirstRows(node: SchemaTreeNode | undefined): Promise<void> {
    const table = await this.tableOf(node);
    if (!table) return;
    const sql = this.port.selectFirstRows(table.schema, table.name);
    const commands = await vscode.commands.getCommands(true);
    if (commands.includes(SHOW_QUERY_RESULTS)) {
      await vscode.commands.executeCommand(SHOW_QUERY_RESULTS, { sql, title: `${table.name}: first 100 rows` });
      return;
    }
    // Until a results view exists: the query in an editor, run as any read (rows in the panel).
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: `${sql}\n` });
    await vscode.window.showTextDocument(document, { preview: false });
    await vscode.commands.executeCommand('postgresAgent.runSqlWithReview');
  }

  private async showDdl(node: SchemaTreeNode | undefined): Promise<void> {
    const table = await this.tableOf(node);
    const snapshot = table ? await this.snapshot() : undefined;
    const info = snapshot?.tables.find((t) => t.schema === table?.schema && t.name === table?.name);
    if (!info) return;
    const document = await vscode.workspace.openTextDocument({
      language: 'sql',
      content: this.port.tableDdlText(info),
    });
    await vscode.window.showTextDocument(document, { preview: false });
  }

  private async copyName(node: SchemaTreeNode | undefined): Promise<void> {
    const table = await this.tableOf(node);
    if (!table) return;
    const name = qualifiedName(table.schema, table.name);
    await vscode.env.clipboard.writeText(name);
    void vscode.window.setStatusBarMessage(`Postgres Agent: copied ${name}`, 3000);
  }

  private async askAbout(node: SchemaTreeNode | undefined): Promise<void> {
    const table = await this.tableOf(node);
    if (table)
      await vscode.commands.executeCommand('postgresAgent.ask', `About ${qualifiedName(table.schema, table.name)}: `);
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

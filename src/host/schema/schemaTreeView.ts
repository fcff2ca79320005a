/**
 * The schema explorer (issue 15): a native TreeView under the Postgres Agent activity bar icon. The tree is
 * read by schema from the window's schema cache (core/db/schemaTree.ts, no query of its own): the schemas with
 * their table counts from the cache's index, one schema's tables when it is expanded, a page at a time with
 * "Load more"; Find Table… picks a table by name (the names alone are read) and reveals it. Refreshed when the
 * connection or the schema changes; context menu: Ask about this table, Select first 100 rows, Show DDL, Copy
 * name; a filter in the title bar narrows the tables by name (that one reads every table).
 */
import * as vscode from 'vscode';
import type { SchemaTreeNode } from '../../core/db/schemaTree';
import type { Logger } from '../../core/platform/logger';
import type { SchemaSnapshot, TableInfo } from '../../shared/schema';
import { qualifiedName } from '../../shared/sqlNames';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';

export const SCHEMA_TREE_VIEW_ID = 'postgresAgent.schemaTree';
const FILTERED_CONTEXT = 'postgresAgent.schemaTreeFiltered';
/** Whether a database is open: the view's welcome (Open Sample Database, Select Connection…) shows until one is. */
const OPEN_CONTEXT = 'postgresAgent.databaseOpen';
/** The command other views (the results view) provide to run a read and show its rows; the fallback is Run SQL with Review. */
const SHOW_QUERY_RESULTS = 'postgresAgent.showQueryResults';

const EMPTY: SchemaSnapshot = { database: '', serverVersion: '', tables: [] };

const ICONS: Record<string, string> = {
  key: 'key',
  'foreign-key': 'references',
  index: 'list-ordered',
  trigger: 'zap',
};

/** What the Schema tree needs of the core and the window's schema cache (built in host/compose/schemaPorts.ts). */
export interface SchemaTreePort extends Pick<
  CoreServices,
  | 'schemaTreeChildren'
  | 'schemaLevel'
  | 'tablesLevel'
  | 'tableChildren'
  | 'pagesShowing'
  | 'selectFirstRows'
  | 'tableDdlText'
> {
  /** The open database's schemas and their table counts (the cache's index, nothing decoded). */
  schemas(): Promise<{ name: string; tables: number }[]>;
  /** One schema's tables (that schema decoded alone). */
  tablesOf(schema: string): Promise<TableInfo[]>;
  /** Every table's name, per schema (no table decoded). */
  tableNames(): Promise<{ schema: string; names: string[] }[]>;
}

export class SchemaTreeView implements vscode.TreeDataProvider<SchemaTreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SchemaTreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private filter = '';
  /** Pages of tables shown per expanded schema ("Load more" adds one); forgotten when another database opens. */
  private readonly pages = new Map<string, number>();
  private database = '';
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
        const database = JSON.stringify(session.connection);
        if (database !== this.database) this.pages.clear();
        this.database = database;
        this.changed.fire(undefined);
      }),
      vscode.commands.registerCommand('postgresAgent.findTable', () => this.findTable()),
      vscode.commands.registerCommand('postgresAgent.schemaTree.loadMore', (schema?: string) => this.loadMore(schema)),
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
      case 'loadMore':
        return Object.assign(
          new vscode.TreeItem(`Load more… (${node.remaining} not shown)`, vscode.TreeItemCollapsibleState.None),
          {
            iconPath: new vscode.ThemeIcon('ellipsis'),
            tooltip: `Shows the next page of ${node.schema}'s tables; Find Table… goes straight to one.`,
            command: {
              command: 'postgresAgent.schemaTree.loadMore',
              title: 'Load More Tables',
              arguments: [node.schema],
            },
            contextValue: 'loadMore',
          },
        );
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
    if (this.session.connection.status !== 'connected') return [];
    if (this.filter !== '') {
      const snapshot = await this.snapshot();
      return snapshot ? this.port.schemaTreeChildren(snapshot, node, this.filter) : [];
    }
    return this.reading(async () => {
      if (node === undefined) return this.port.schemaLevel(await this.port.schemas());
      if (node.kind === 'schema')
        return this.port.tablesLevel(
          node.schema,
          await this.port.tablesOf(node.schema),
          this.pages.get(node.schema) ?? 1,
        );
      if (node.kind !== 'table' && node.kind !== 'group') return [];
      const name = node.kind === 'table' ? node.name : node.table;
      const table = (await this.port.tablesOf(node.schema)).find((t) => t.name === name);
      return table ? this.port.tableChildren(table, node) : [];
    }, []);
  }

  /** A table's parent is its schema (what `reveal` needs); other nodes are not revealed. */
  async getParent(node: SchemaTreeNode): Promise<SchemaTreeNode | undefined> {
    if (node.kind !== 'table') return undefined;
    if (this.filter !== '') {
      const snapshot = await this.snapshot();
      return this.port
        .schemaTreeChildren(snapshot ?? EMPTY, undefined, this.filter)
        .find((n) => n.kind === 'schema' && n.schema === node.schema);
    }
    const schemas = await this.reading(() => this.port.schemas(), []);
    return { kind: 'schema', schema: node.schema, tables: schemas.find((s) => s.name === node.schema)?.tables ?? 0 };
  }

  /**
   * Selects and shows a table's node (the schema diagram's click, Find Table…): its schema's pages are loaded up
   * to it; a filter that hides it is cleared first; a partition shows as its parent.
   */
  async revealTable(schema: string, name: string): Promise<void> {
    const tables = await this.reading(() => this.port.tablesOf(schema), []);
    const parent = tables.find((t) => t.name === name)?.partitionOf;
    const shown = parent && parent.schema === schema ? parent.table : name;
    if (this.filter !== '') {
      const snapshot = await this.snapshot();
      const kept = snapshot
        ? this.port.schemaTreeChildren(snapshot, { kind: 'schema', schema, tables: 0 }, this.filter)
        : [];
      const node = kept.find((n) => n.kind === 'table' && n.name === shown);
      if (node) return this.view.reveal(node, { select: true, focus: false, expand: false });
      this.setFilter('');
    }
    const pages = this.port.pagesShowing(tables, shown);
    if (pages === undefined) return;
    if (pages > (this.pages.get(schema) ?? 1)) {
      this.pages.set(schema, pages);
      this.changed.fire(undefined);
    }
    const node = this.port.tablesLevel(schema, tables, pages).find((n) => n.kind === 'table' && n.name === shown);
    if (node) await this.view.reveal(node, { select: true, focus: false, expand: false });
  }

  private loadMore(schema: string | undefined): void {
    if (schema === undefined) return;
    this.pages.set(schema, (this.pages.get(schema) ?? 1) + 1);
    this.changed.fire(undefined);
  }

  /** Find Table…: every table's name (read alone, no table decoded) in a quick pick; the one picked is revealed. */
  private async findTable(): Promise<void> {
    const table = await this.pickTable('Postgres Agent: Find Table');
    if (!table) return;
    await vscode.commands.executeCommand(`${SCHEMA_TREE_VIEW_ID}.focus`);
    await this.revealTable(table.schema, table.name);
  }

  /** Every table by name, its schema beside it; undefined when none is picked (or no database is open). */
  private async pickTable(title: string): Promise<{ schema: string; name: string } | undefined> {
    if (this.session.connection.status !== 'connected') {
      void vscode.window.showInformationMessage(
        'Open a database first: Postgres Agent: Open Sample Database, or Select Connection…',
      );
      return undefined;
    }
    const names = await this.reading(() => this.port.tableNames(), []);
    const items = names.flatMap(({ schema, names: inSchema }) =>
      inSchema.map((name) => ({ label: name, description: schema })),
    );
    const picked = await vscode.window.showQuickPick(items, {
      title,
      placeHolder: `${items.length} tables: type part of a name (or of its schema)`,
      matchOnDescription: true,
    });
    return picked ? { schema: picked.description, name: picked.label } : undefined;
  }

  /** A read of the cache; when it fails, the view says why and `fallback` stands for its result. */
  private async reading<T>(read: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await read();
    } catch (error) {
      this.logger.warn('schema explorer: the schema could not be read', { error: String(error) });
      this.view.message = `The schema could not be read: ${error instanceof Error ? error.message : String(error)}`;
      return fallback;
    }
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
    this.pages.clear();
    await this.session.forgetSchema();
    this.changed.fire(undefined);
  }

  /** The table a command acts on: the node it was invoked on, else the selection, else one picked by name. */
  private async tableOf(node: SchemaTreeNode | undefined): Promise<{ schema: string; name: string } | undefined> {
    const candidate = node ?? this.view.selection[0];
    if (candidate?.kind === 'table') return candidate;
    return this.pickTable('Postgres Agent: which table?');
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
    if (!table) return;
    const info = (await this.reading(() => this.port.tablesOf(table.schema), [])).find((t) => t.name === table.name);
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

/**
 * The schema diagram (issue 33): an editor tab drawing a table's foreign-key neighbourhood or one schema from the
 * window's schema snapshot (never more than it can lay out quickly; the page says which). A click on a table reveals
 * its Schema tree node and shows its first 100 rows through Select First 100 Rows; exports are saved where the
 * person picks. It takes a small port, built by the composition root, never the whole core.
 */
import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import type { Logger } from '../../core/platform/logger';
import type { DiagramLayout } from '../../shared/diagramGeometry';
import type { DiagramGraph, DiagramHostMessage, DiagramWebviewMessage } from '../../shared/diagramProtocol';
import { DIAGRAM_WEBVIEW_MESSAGE } from '../../shared/diagramProtocol';
import type { SchemaSnapshot } from '../../shared/schema';
import { openWebviewPanel } from '../ui/webviewPanel';

export const DIAGRAM_PANEL_TYPE = 'postgresAgent.schemaDiagram';

/** What the diagram needs of the window: the schema, the graph builders (core), the Schema tree and the results. */
export interface DiagramPort {
  /** The open database's schema snapshot (the schema cache); throws when no database is open. */
  snapshot(): Promise<SchemaSnapshot>;
  neighbourhood(snapshot: SchemaSnapshot, schema: string, table: string, depth: 1 | 2): DiagramGraph;
  schema(snapshot: SchemaSnapshot, schema: string): DiagramGraph;
  schemas(snapshot: SchemaSnapshot): string[];
  search(snapshot: SchemaSnapshot, query: string): { schema: string; name: string }[];
  /** The layout engine's class (core: ELK in a worker thread, layouts cached per schema and graph hash). */
  layouts(): new () => LayoutEngine;
  revealTable(schema: string, table: string): Promise<void>;
  showFirstRows(schema: string, table: string): Promise<void>;
}

/** What the panel asks of the layouts (core/diagram/diagramLayouts.ts). */
export interface LayoutEngine extends vscode.Disposable {
  cached(graph: DiagramGraph): DiagramLayout | undefined;
  layout(graph: DiagramGraph): Promise<DiagramLayout>;
  warm(): void;
}

type Scope =
  { kind: 'schema'; schema: string } | { kind: 'neighbourhood'; schema: string; table: string; depth: 1 | 2 };

export class DiagramPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private scope: Scope | undefined;
  private version = 0;
  private engine: LayoutEngine | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly port: DiagramPort,
    private readonly logger: Logger,
  ) {
    this.disposables.push(
      // From the palette (no argument), a schema node's context menu (the node) or a caller (the schema's name).
      vscode.commands.registerCommand('postgresAgent.showSchemaDiagram', (arg?: unknown) =>
        this.openSchema(schemaOf(arg)),
      ),
      vscode.commands.registerCommand('postgresAgent.showInDiagram', (node?: unknown) => this.openTableOf(node)),
    );
  }

  /** One schema: the given one, else `public` when there is one, else the first. */
  async openSchema(schema?: string): Promise<void> {
    const snapshot = await this.snapshotOrSay();
    if (!snapshot) return;
    const schemas = this.port.schemas(snapshot);
    const chosen = schema !== undefined && schemas.includes(schema) ? schema : schemas[0];
    if (chosen === undefined) {
      void vscode.window.showInformationMessage('This database has no tables to draw.');
      return;
    }
    this.scope = { kind: 'schema', schema: chosen };
    this.ensurePanel();
    this.push(snapshot);
  }

  /** A Schema tree table node (its context menu), or a table picked by name. */
  private async openTableOf(node: unknown): Promise<void> {
    const snapshot = await this.snapshotOrSay();
    if (!snapshot) return;
    let table = tableNodeOf(node);
    if (!table) {
      const picked = await vscode.window.showQuickPick(
        snapshot.tables.map((t) => ({ label: `${t.schema}.${t.name}`, table: t })),
        { title: 'Postgres Agent: show which table in the diagram?' },
      );
      table = picked ? { schema: picked.table.schema, name: picked.table.name } : undefined;
    }
    if (!table) return;
    this.scope = { kind: 'neighbourhood', schema: table.schema, table: table.name, depth: 1 };
    this.ensurePanel();
    this.push(snapshot);
  }

  private async snapshotOrSay(): Promise<SchemaSnapshot | undefined> {
    try {
      return await this.port.snapshot();
    } catch (error) {
      void vscode.window.showErrorMessage(
        `The schema diagram needs an open database: ${error instanceof Error ? error.message : String(error)}`,
      );
      return undefined;
    }
  }

  private ensurePanel(): void {
    if (this.panel) {
      this.panel.reveal(undefined, false);
      return;
    }
    // ELK starts while the page loads: its start is most of a first layout's time.
    this.layouts().warm();
    const panel = openWebviewPanel(
      this.extensionUri,
      { viewType: DIAGRAM_PANEL_TYPE, title: 'Schema Diagram', show: { viewColumn: vscode.ViewColumn.Active } },
      { styles: ['media/diagram.css'], script: 'dist/diagram.js' },
    );
    this.panel = panel;
    const listeners = [
      panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)),
      panel.onDidDispose(() => {
        this.panel = undefined;
        this.engine?.dispose();
        this.engine = undefined;
        for (const l of listeners) l.dispose();
      }),
    ];
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = DIAGRAM_WEBVIEW_MESSAGE.safeParse(raw);
    if (!parsed.success) {
      this.logger.warn('ignored a malformed schema diagram message', {
        reason: parsed.error.issues[0]?.message ?? 'invalid',
      });
      return;
    }
    try {
      await this.handle(parsed.data);
    } catch (error) {
      this.logger.warn('schema diagram action failed', { error: String(error) });
      void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
    }
  }

  private async handle(message: DiagramWebviewMessage): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.push(await this.port.snapshot());
        return;
      case 'openSchema':
        this.scope = { kind: 'schema', schema: message.schema };
        this.push(await this.port.snapshot());
        return;
      case 'openNeighbourhood':
        this.scope = { kind: 'neighbourhood', schema: message.schema, table: message.table, depth: message.depth };
        this.push(await this.port.snapshot());
        return;
      case 'search': {
        const tables = this.port.search(await this.port.snapshot(), message.query);
        this.send({ type: 'searchResults', query: message.query, tables });
        return;
      }
      case 'openTable':
        await this.port.revealTable(message.schema, message.table);
        await this.port.showFirstRows(message.schema, message.table);
        return;
      case 'export':
        await this.save(message.format, message.data);
        return;
      default: {
        const unexpected: never = message;
        this.logger.warn('unknown schema diagram message', { message: JSON.stringify(unexpected) });
      }
    }
  }

  private layouts(): LayoutEngine {
    this.engine ??= new (this.port.layouts())();
    return this.engine;
  }

  /**
   * The graph at once (with its layout when cached: the page draws it final), else the page places the tables
   * provisionally and the ELK layout follows as a 'layout' message of the same version.
   */
  private push(snapshot: SchemaSnapshot): void {
    const scope = this.scope;
    if (!scope || !this.panel) return;
    const version = ++this.version;
    let graph: DiagramGraph;
    try {
      graph =
        scope.kind === 'schema'
          ? this.port.schema(snapshot, scope.schema)
          : this.port.neighbourhood(snapshot, scope.schema, scope.table, scope.depth);
    } catch (error) {
      this.send({ type: 'error', version, message: error instanceof Error ? error.message : String(error) });
      return;
    }
    this.panel.title =
      scope.kind === 'schema' ? `Diagram: ${scope.schema}` : `Diagram: ${scope.table} (depth ${scope.depth})`;
    const engine = this.layouts();
    const cached = engine.cached(graph);
    const base = { type: 'graph', version, graph, database: snapshot.database, schemas: this.port.schemas(snapshot) };
    this.send(cached ? { ...base, type: 'graph', layout: cached } : { ...base, type: 'graph' });
    if (cached) return;
    engine.layout(graph).then(
      (layout) => {
        if (version === this.version) this.send({ type: 'layout', version, layout });
      },
      (error: unknown) => {
        this.logger.warn('schema diagram layout failed', { error: String(error) });
        if (version === this.version)
          this.send({
            type: 'error',
            version: ++this.version,
            message: `The diagram could not be laid out: ${String(error)}`,
          });
      },
    );
  }

  private send(message: DiagramHostMessage): void {
    void this.panel?.webview.postMessage(message);
  }

  private async save(format: 'svg' | 'png', data: string): Promise<void> {
    const content = format === 'svg' ? data : Buffer.from(data.replace(/^data:image\/png;base64,/, ''), 'base64');
    if (format === 'png' && !data.startsWith('data:image/png;base64,'))
      throw new Error('The PNG export was not an image.');
    if (format === 'svg' && !data.startsWith('<?xml')) throw new Error('The SVG export was not an SVG document.');
    const name = this.scope?.kind === 'neighbourhood' ? this.scope.table : (this.scope?.schema ?? 'schema');
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, `${name}-diagram.${format}`) } : {}),
      filters: format === 'svg' ? { SVG: ['svg'] } : { PNG: ['png'] },
      title: `Export the schema diagram as ${format.toUpperCase()}`,
    });
    if (!target) return;
    await writeFile(target.fsPath, content);
    void vscode.window.showInformationMessage(`Saved the diagram to ${target.fsPath}.`);
  }

  dispose(): void {
    this.panel?.dispose();
    this.engine?.dispose();
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

function schemaOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  const schema = typeof arg === 'object' && arg !== null ? (arg as { schema?: unknown }).schema : undefined;
  return typeof schema === 'string' ? schema : undefined;
}

function tableNodeOf(node: unknown): { schema: string; name: string } | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  const n = node as { kind?: unknown; schema?: unknown; name?: unknown };
  return n.kind === 'table' && typeof n.schema === 'string' && typeof n.name === 'string'
    ? { schema: n.schema, name: n.name }
    : undefined;
}

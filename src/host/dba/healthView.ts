/**
 * The Health view (issue 26): `pg-agent health` as a tree in the side bar — check → findings → "Fix as SQL". A fix
 * opens in a SQL editor and goes to Run SQL with Review, so it is held with its impact and the usual CodeLens
 * approval; nothing here writes. The checks are read-only catalog queries (core/dba/runHealth.ts).
 */
import * as vscode from 'vscode';
import type { CheckResult, Finding, HealthReport } from '../../core/dba/healthTypes';
import type { Logger } from '../../core/platform/logger';
import { severityCounts } from '../../core/present/renderHealth';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';
import { visibleText } from '../../shared/visibleSql';

export const HEALTH_VIEW_ID = 'postgresAgent.health';
export const RUN_HEALTH_COMMAND = 'postgresAgent.runHealthChecks';
export const FIX_FINDING_COMMAND = 'postgresAgent.fixHealthFinding';

/** What the view needs of the core and the window (host/compose/dbaPorts.ts). */
export interface HealthViewPort extends Pick<CoreServices, 'runHealth' | 'toAgentError'> {
  /** The error shown with its advice and a way to the log (ui/showError.ts). */
  showError(error: unknown): Promise<void>;
}

type Node =
  | { kind: 'check'; check: CheckResult }
  | { kind: 'finding'; finding: Finding }
  | { kind: 'fix'; sql: string; finding: Finding };

const SEVERITY_ICON: Record<Finding['severity'], vscode.ThemeIcon> = {
  critical: new vscode.ThemeIcon('error', new vscode.ThemeColor('errorForeground')),
  warning: new vscode.ThemeIcon('warning', new vscode.ThemeColor('editorWarning.foreground')),
  info: new vscode.ThemeIcon('info'),
};

const SEVERITY_RANK: Record<Finding['severity'], number> = { critical: 0, warning: 1, info: 2 };

function rank(check: CheckResult): number {
  if (check.findings.length > 0) return Math.min(...check.findings.map((f) => SEVERITY_RANK[f.severity]));
  return check.status === 'ok' ? 5 : 4;
}

export class HealthView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private report: HealthReport | undefined;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly session: DatabaseSession,
    private readonly port: HealthViewPort,
    private readonly logger: Logger,
  ) {
    this.view = vscode.window.createTreeView(HEALTH_VIEW_ID, { treeDataProvider: this });
    this.disposables.push(
      this.view,
      this.changed,
      vscode.commands.registerCommand(RUN_HEALTH_COMMAND, () => this.run()),
      vscode.commands.registerCommand(FIX_FINDING_COMMAND, (sql: unknown) =>
        typeof sql === 'string' ? this.fix(sql) : undefined,
      ),
    );
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case 'check': {
        const { check } = node;
        const item = new vscode.TreeItem(
          check.title,
          check.findings.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
        );
        item.description =
          check.status === 'ok'
            ? 'ok'
            : check.status === 'findings'
              ? `${check.findings.length + (check.more ?? 0)} found${check.more ? ` (the worst ${check.findings.length} listed)` : ''}`
              : check.status === 'skipped'
                ? `could not run: ${check.note ?? ''}`
                : `failed: ${check.note ?? ''}`;
        item.iconPath = new vscode.ThemeIcon(
          check.status === 'ok'
            ? 'pass'
            : check.status === 'findings'
              ? 'warning'
              : check.status === 'skipped'
                ? 'circle-slash'
                : 'error',
        );
        item.tooltip = `${check.title}: ${item.description}${Object.keys(check.thresholds).length > 0 ? `\nthresholds: ${JSON.stringify(check.thresholds)}` : ''}`;
        item.contextValue = 'healthCheck';
        return item;
      }
      case 'finding': {
        const { finding } = node;
        // Names, application names and query texts come from the database: hidden characters are shown, never rendered.
        const item = new vscode.TreeItem(
          visibleText(finding.object),
          finding.fixSql ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
        );
        item.description = visibleText(finding.message);
        item.iconPath = SEVERITY_ICON[finding.severity];
        item.tooltip = new vscode.MarkdownString()
          .appendText(`${finding.severity.toUpperCase()}: ${visibleText(finding.message)}\n\n`)
          .appendCodeblock(visibleText(JSON.stringify(finding.evidence, null, 1)), 'json')
          .appendText(finding.advice ?? '');
        item.contextValue = 'healthFinding';
        return item;
      }
      case 'fix': {
        const item = new vscode.TreeItem('Fix as SQL', vscode.TreeItemCollapsibleState.None);
        item.description = visibleText(node.sql);
        item.tooltip = new vscode.MarkdownString()
          .appendCodeblock(visibleText(node.sql), 'sql')
          .appendText(
            `\n${node.finding.advice ?? ''}\n\nOpens in an editor and waits for your approval with its impact.`,
          );
        item.iconPath = new vscode.ThemeIcon('wrench');
        item.command = { command: FIX_FINDING_COMMAND, title: 'Fix as SQL', arguments: [node.sql] };
        item.contextValue = 'healthFix';
        return item;
      }
    }
  }

  getChildren(node?: Node): Node[] {
    // What needs attention first: checks with findings (the most severe first), then those that could not run, then ok.
    if (!node)
      return [...(this.report?.checks ?? [])]
        .sort((a, b) => rank(a) - rank(b))
        .map((check) => ({ kind: 'check', check }));
    if (node.kind === 'check') return node.check.findings.map((finding) => ({ kind: 'finding', finding }));
    if (node.kind === 'finding' && node.finding.fixSql)
      return [{ kind: 'fix', sql: node.finding.fixSql, finding: node.finding }];
    return [];
  }

  /** Runs every check on the open database, with progress; the tree shows the report. */
  async run(): Promise<void> {
    try {
      const report = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Postgres Agent: health checks', cancellable: false },
        async (progress) =>
          this.session.use(({ db }) =>
            this.port.runHealth(db, {
              onProgress: (message) => progress.report({ message: message.replace(/^health: /, '') }),
            }),
          ),
      );
      this.report = report;
      const s = report.summary;
      this.view.message = `${report.database}: ${severityCounts(s)} · ${s.skipped} could not run · ${report.queries} catalog reads in ${report.elapsedMs} ms`;
      this.changed.fire(undefined);
      this.logger.info('health checks done', {
        database: report.database,
        ...s,
        queries: report.queries,
        elapsedMs: report.elapsedMs,
      });
      await vscode.commands.executeCommand(`${HEALTH_VIEW_ID}.focus`);
    } catch (error) {
      this.logger.warn('health checks failed', { error: this.port.toAgentError(error).message });
      await this.port.showError(error);
    }
  }

  /** The fix in a new SQL editor, sent to Run SQL with Review: held, with its impact and the CodeLens approval. */
  private async fix(sql: string): Promise<void> {
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: `${sql};\n` });
    await vscode.window.showTextDocument(document, { preview: false });
    await vscode.commands.executeCommand('postgresAgent.runSqlWithReview');
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

/**
 * "Advise Indexes for This Query" (issue 26), next to Explain Query in a SQL editor's context menu: index advice
 * for the selected query (or the whole file), measured with hypopg when the database has it. The person picks a
 * recommendation; it opens in an editor and goes to Run SQL with Review (held, with the CodeLens approval).
 */
import * as vscode from 'vscode';
import type { IndexRecommendation } from '../../core/dba/indexAdvice/adviceTypes';
import type { Logger } from '../../core/platform/logger';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';

export const ADVISE_INDEXES_COMMAND = 'postgresAgent.adviseIndexes';

/** What the command needs of the core and the window (host/compose/dbaPorts.ts). */
export interface AdviseIndexesPort extends Pick<CoreServices, 'adviseIndexes' | 'toAgentError'> {
  /** The error shown with its advice and a way to the log (ui/showError.ts). */
  showError(error: unknown): Promise<void>;
}

export function registerAdviseIndexes(
  session: DatabaseSession,
  port: AdviseIndexesPort,
  logger: Logger,
): vscode.Disposable {
  return vscode.commands.registerCommand(ADVISE_INDEXES_COMMAND, () => adviseFromEditor(session, port, logger));
}

async function adviseFromEditor(session: DatabaseSession, port: AdviseIndexesPort, logger: Logger): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const sql = editor
    ? (editor.selection.isEmpty ? editor.document.getText() : editor.document.getText(editor.selection))
        .trim()
        .replace(/;\s*$/, '')
    : '';
  if (!sql) {
    void vscode.window.showInformationMessage(
      'Advise Indexes works on the selected query (or the whole file) of a SQL editor: open a .sql file first.',
    );
    return;
  }
  try {
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Postgres Agent: advising indexes…' },
      () => session.use(({ db }) => port.adviseIndexes(db, [{ sql, calls: 1, source: 'given' }])),
    );
    logger.info('index advice', {
      measured: report.measured,
      candidates: report.candidates,
      recommendations: report.recommendations.length,
      explains: report.explains,
      elapsedMs: report.elapsedMs,
    });
    const skipped = report.queries[0]?.skipped;
    if (skipped) {
      void vscode.window.showWarningMessage(`No index advice: ${skipped}.`);
      return;
    }
    if (report.recommendations.length === 0) {
      void vscode.window.showInformationMessage(
        report.measured
          ? 'No index would make this query notably cheaper (measured with hypothetical indexes).'
          : `No candidate index. ${report.note ?? ''}`,
      );
      return;
    }
    if (!report.measured && report.note) void vscode.window.showWarningMessage(report.note);
    const picked = await vscode.window.showQuickPick(
      report.recommendations.map((r) => ({
        label: r.sql,
        description: describe(r),
        detail: r.reasons.join('; '),
        recommendation: r,
      })),
      { title: 'Index advice: pick one to review its CREATE INDEX (held for your approval)', matchOnDescription: true },
    );
    if (!picked) return;
    const document = await vscode.workspace.openTextDocument({
      language: 'sql',
      content: `${picked.recommendation.sql};\n`,
    });
    await vscode.window.showTextDocument(document, { preview: false });
    await vscode.commands.executeCommand('postgresAgent.runSqlWithReview');
  } catch (error) {
    logger.warn('index advice failed', { error: port.toAgentError(error).message });
    await port.showError(error);
  }
}

function describe(r: IndexRecommendation): string {
  if (!r.measured) return 'not measured (no hypopg)';
  const [benefit] = r.benefits;
  const cost = benefit ? `cost ${benefit.costBefore} → ${benefit.costAfter}` : '';
  return `${cost} · −${Math.round((r.gainRatio ?? 0) * 100)}% · ~${Math.round((r.estimatedBytes ?? 0) / 1024)} KiB · build ~${r.buildSecondsEstimate} s`;
}

/** The port of the History view, built from the window's session, the inline approval and the core (loaded on first use). */
import * as vscode from 'vscode';
import { join } from 'node:path';
import type { HistoryTail } from '../../core/sql/history/historyTail';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreLoader } from '../lazyServices';
import { showError } from '../ui/showError';
import type { HistoryViewPort } from '../history/historyView';

export function historyViewPort(
  core: CoreLoader,
  session: DatabaseSession,
  rootDir: string,
  output: vscode.LogOutputChannel,
): HistoryViewPort {
  let tail: HistoryTail | undefined;
  // .pgagent/history (workspacePaths), spelled out here so that activation does not load the core for it.
  const historyDir = join(rootDir, '.pgagent', 'history');
  return {
    historyDir,
    tail: () => (tail ??= new (core().HistoryTail)(historyDir)),
    activeDatabase: () => session.use(({ db }) => Promise.resolve(core().historyDatabaseKey(db.label))),
    runAgainOf: (entry, active) => core().runAgainOf(entry, active),
    // In the first editor group (never a new one per run), then Run SQL with Review on that editor: the one path.
    review: async (sql) => {
      const document = await vscode.workspace.openTextDocument({ language: 'sql', content: sql });
      await vscode.window.showTextDocument(document, { preview: false, viewColumn: vscode.ViewColumn.One });
      await vscode.commands.executeCommand('postgresAgent.runSqlWithReview');
    },
    showError: (error) => showError(core, error, output),
  };
}

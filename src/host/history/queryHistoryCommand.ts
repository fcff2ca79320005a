/**
 * "Query History…": shows the History view (what ran through pg-agent on every database of this workspace: CLI,
 * VS Code, MCP, guard; newest first) and asks for its filter. Run Again and Copy SQL are on the view's statements.
 */
import * as vscode from 'vscode';

export const QUERY_HISTORY_COMMAND = 'postgresAgent.queryHistory';

export function registerQueryHistory(view: { show(): Promise<void> }): vscode.Disposable {
  return vscode.commands.registerCommand(QUERY_HISTORY_COMMAND, () => view.show());
}

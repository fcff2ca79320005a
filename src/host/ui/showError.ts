/** Shows an error the way UX.md asks: what happened, what to do, and a way to the log. */
import * as vscode from 'vscode';
import type { CoreLoader } from '../lazyServices';

export async function showError(core: CoreLoader, error: unknown, output: vscode.LogOutputChannel): Promise<void> {
  const e = core().toAgentError(error);
  const text = e.advice ? `${e.message} ${e.advice}` : e.message;
  const choice = await vscode.window.showErrorMessage(text, 'Select Connection…', 'Show Log');
  if (choice === 'Show Log') output.show(true);
  if (choice === 'Select Connection…') await vscode.commands.executeCommand('postgresAgent.selectConnection');
}

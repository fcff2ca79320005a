/** Shows an error the way UX.md asks: what happened, what to do, and a way to the log. */
import * as vscode from 'vscode';
import type { AgentError } from '../../core/platform/errors';

/**
 * Reads a thrown value as the core's AgentError (`toAgentError`); a thunk, so that the core loads only when an
 * error is shown. The composition root passes its loader here; a feature gets `showError(error)` in its port.
 */
export type ErrorReader = () => { toAgentError(error: unknown): AgentError };

/** What happened and what to do, in one line. */
export function errorText(e: Pick<AgentError, 'message' | 'advice'>): string {
  return e.advice ? `${e.message} ${e.advice}` : e.message;
}

export async function showError(errors: ErrorReader, error: unknown, output: vscode.LogOutputChannel): Promise<void> {
  const choice = await vscode.window.showErrorMessage(
    errorText(errors().toAgentError(error)),
    'Select Connection…',
    'Show Log',
  );
  if (choice === 'Show Log') output.show(true);
  if (choice === 'Select Connection…') await vscode.commands.executeCommand('postgresAgent.selectConnection');
}

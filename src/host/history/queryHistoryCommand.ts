/**
 * "Query History…": what ran through pg-agent on every database of this workspace (CLI, VS Code, MCP, guard),
 * newest first, searched as you type (by SQL, person, origin, ticket). Picking an entry runs it again through Run
 * SQL with Review: a read runs read-only, a write is held on a new ticket (never its old one).
 */
import * as vscode from 'vscode';
import type { HistoryEntry } from '../../core/sql/history/historyEntry';

export const QUERY_HISTORY_COMMAND = 'postgresAgent.queryHistory';

export interface QueryHistoryPort {
  /** The newest entries of the workspace's history. */
  entries(): Promise<HistoryEntry[]>;
  showError(error: unknown): Promise<void>;
}

interface EntryItem extends vscode.QuickPickItem {
  entry: HistoryEntry;
}

export function registerQueryHistory(port: QueryHistoryPort): vscode.Disposable {
  return vscode.commands.registerCommand(QUERY_HISTORY_COMMAND, () => showHistory(port));
}

async function showHistory(port: QueryHistoryPort): Promise<void> {
  try {
    const entries = await port.entries();
    if (entries.length === 0) {
      void vscode.window.showInformationMessage(
        'No query history yet: what runs through Postgres Agent is listed here.',
      );
      return;
    }
    const items: EntryItem[] = entries.map((entry) => ({
      label: `${entry.kind === 'write' ? '$(edit)' : '$(search)'} ${entry.sql.replace(/\s+/g, ' ').slice(0, 120)}`,
      description: `${entry.db} · ${entry.origin}/${entry.who}${entry.ticket ? ` · ${entry.ticket}` : ''}`,
      detail: `${entry.at.replace('T', ' ').slice(0, 19)} · ${entry.status === 'error' ? `failed: ${entry.error ?? ''}` : `${entry.rows ?? '?'} rows`}${entry.ms === null ? '' : ` · ${entry.ms} ms`}`,
      entry,
    }));
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Query History: pick one to run it again (a write gets a new ticket)',
      placeHolder: 'search the SQL, person, origin, ticket',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) return;
    const { entry } = picked;
    const note =
      entry.kind === 'write'
        ? `-- Run again from the query history (ticket ${entry.ticket ?? '?'} was for the earlier run): held on a new ticket.\n`
        : '-- Run again from the query history.\n';
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: `${note}${entry.sql};\n` });
    await vscode.window.showTextDocument(document, { preview: false });
    await vscode.commands.executeCommand('postgresAgent.runSqlWithReview');
  } catch (error) {
    await port.showError(error);
  }
}

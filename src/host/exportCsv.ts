/** "Export CSV" of a result grid: the host writes its own copy of the rows where the person chooses. */
import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import { toCsv } from '../shared/csv';
import type { ResultsView } from '../shared/protocol';

export async function exportCsv(results: ResultsView | null | undefined, workspaceDir: string | undefined): Promise<void> {
  if (!results) {
    void vscode.window.showWarningMessage('There are no results to export.');
    return;
  }
  const suggested = vscode.Uri.file(`${workspaceDir ?? ''}/results.csv`);
  const target = await vscode.window.showSaveDialog({ defaultUri: suggested, filters: { CSV: ['csv'] }, title: 'Export results as CSV' });
  if (!target) return;
  await writeFile(target.fsPath, toCsv(results.fields.map((f) => f.name), results.rows), 'utf8');
  const note = results.truncated ? ' (the rows shown: the query had more than the row cap)' : '';
  void vscode.window.showInformationMessage(`Exported ${results.rowCount.toLocaleString('en-US')} rows to ${target.fsPath}${note}.`);
}

/**
 * "Compare Schemas…": the active connection (A, where the DDL runs) against another saved connection, the sample
 * database or a snapshot file (B). The next step of the DDL that turns A into B opens in a SQL editor and goes to
 * Run SQL with Review: held as one ticket with its lock analysis at the inline approval. Once it ran, the command
 * run again gives the next step.
 */
import * as vscode from 'vscode';
import type { DiffSnapshot } from '../../core/diff/diffSnapshot';

export const COMPARE_SCHEMAS_COMMAND = 'postgresAgent.compareSchemas';

/** What the command needs, built once by the composition root (compose/compareSchemasPort.ts). */
export interface CompareSchemasPort {
  /** The active connection's name and structure. */
  active(): Promise<{ label: string; snapshot: DiffSnapshot }>;
  /** The other sides offered: saved connections (not the active one) and the sample database. */
  others(): Promise<string[]>;
  /** The structure of one of `others()`, or of a snapshot file. */
  snapshotOf(side: { kind: 'connection'; name: string } | { kind: 'file'; path: string }): Promise<DiffSnapshot>;
  /** The next step of the DDL from `a` to `b`, or undefined when `a` already has `b`'s schema. */
  nextStep(
    a: DiffSnapshot,
    b: DiffSnapshot,
  ): { sql: string; phase: string; steps: number; notes: string[] } | undefined;
  showError(error: unknown): Promise<void>;
}

const FILE_CHOICE = 'Snapshot file…';

export function registerCompareSchemas(port: CompareSchemasPort): vscode.Disposable {
  return vscode.commands.registerCommand(COMPARE_SCHEMAS_COMMAND, () => compare(port));
}

async function compare(port: CompareSchemasPort): Promise<void> {
  try {
    const others = await port.others();
    const picked = await vscode.window.showQuickPick([...others, FILE_CHOICE], {
      title: 'Compare Schemas: the schema to reach (the DDL runs on the active connection)',
      placeHolder: 'a saved connection, the sample database, or a snapshot file (pg-agent diff --snapshot)',
    });
    if (!picked) return;
    let side: Parameters<CompareSchemasPort['snapshotOf']>[0] = { kind: 'connection', name: picked };
    if (picked === FILE_CHOICE) {
      const files = await vscode.window.showOpenDialog({
        canSelectMany: false,
        filters: { 'Schema snapshot': ['json'] },
      });
      const file = files?.[0];
      if (!file) return;
      side = { kind: 'file', path: file.fsPath };
    }
    const chosen = side;
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Comparing schemas', cancellable: false },
      async (progress) => {
        progress.report({ message: 'reading the active connection…' });
        const a = await port.active();
        progress.report({ message: `reading ${chosen.kind === 'file' ? chosen.path : chosen.name}…` });
        const b = await port.snapshotOf(chosen);
        return { label: a.label, step: port.nextStep(a.snapshot, b) };
      },
    );
    if (!result.step) {
      void vscode.window.showInformationMessage(`No difference: ${result.label} already has that schema.`);
      return;
    }
    const { step } = result;
    const header =
      `-- Compare Schemas: step 1 of ${step.steps} (${step.phase}) of the DDL that turns ${result.label} into ${picked}.\n` +
      `-- Once it ran, Compare Schemas again gives the next step.\n` +
      step.notes.map((n) => `-- Note: ${n}\n`).join('');
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: `${header}${step.sql}\n` });
    // The step's SQL selected, so Run SQL with Review puts the DDL alone on the ticket, not the header comments.
    const selection = new vscode.Range(
      document.positionAt(header.length),
      document.positionAt(header.length + step.sql.length),
    );
    await vscode.window.showTextDocument(document, { preview: false, selection });
    await vscode.commands.executeCommand('postgresAgent.runSqlWithReview');
  } catch (error) {
    await port.showError(error);
  }
}

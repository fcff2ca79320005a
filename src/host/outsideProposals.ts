/**
 * Writes proposed by an agent outside this window (`pg-agent mcp` for Copilot, Claude Code, Cursor, Cline,
 * or our own language-model tools) appear at the inline approval like any held write: the proposal file
 * (.pgagent/proposals/<ticket>.sql) opens with the CodeLens, the panel shows its card, and the person's
 * decision is recorded on the ticket the agent waits on. Approving here runs it here (no owner), once.
 */
import * as vscode from 'vscode';
import { basename, join } from 'node:path';
import type { Logger } from '../core/logger';
import { proposalsDir, sqlOffset } from '../mcp/proposalFiles';
import type { SqlReview } from './sqlReview';

export interface OutsideProposalsDeps {
  /** The folder holding .pgagent/ (the workspace folder, or the extension's storage). */
  rootDir: string;
  review: SqlReview;
  logger: Logger;
  showPanel: () => Thenable<unknown>;
}

export class OutsideProposals implements vscode.Disposable {
  private readonly watcher: vscode.FileSystemWatcher;
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly deps: OutsideProposalsDeps) {
    // Cheap at activation: a watcher, no core code; the ticket store opens on the first proposal.
    this.watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(deps.rootDir), '.pgagent/proposals/*.sql'));
    const onFile = (uri: vscode.Uri) => void this.show(uri, true);
    this.disposables = [this.watcher, this.watcher.onDidCreate(onFile), this.watcher.onDidChange(onFile)];
  }

  /** Proposals still pending from before this window opened get their lens and card back. */
  async restoreAll(): Promise<void> {
    const dir = vscode.Uri.file(proposalsDir(this.deps.rootDir));
    let entries: [string, vscode.FileType][];
    try {
      entries = await vscode.workspace.fs.readDirectory(dir);
    } catch (error) {
      // No proposals folder: no agent proposed anything here yet.
      if (error instanceof vscode.FileSystemError && error.code === 'FileNotFound') return;
      throw error;
    }
    for (const [name, type] of entries) {
      if (type === vscode.FileType.File && name.endsWith('.sql')) await this.show(vscode.Uri.file(join(dir.fsPath, name)), false);
    }
  }

  private async show(uri: vscode.Uri, notify: boolean): Promise<void> {
    const ticketId = basename(uri.fsPath, '.sql');
    if (this.deps.review.view().approvals.some((a) => a.ticketId === ticketId)) return;
    try {
      const ticket = await (await this.deps.review.ticketStore()).get(ticketId);
      if (ticket?.status !== 'PENDING_APPROVAL') return;
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      const start = sqlOffset(text, ticket.sql);
      if (start === undefined) {
        this.deps.logger.warn('a proposal file does not hold its ticket\'s SQL; not shown', { ticket: ticketId, file: uri.fsPath });
        return;
      }
      this.deps.review.track({ ticketId, uri, start, end: start + ticket.sql.length, sql: ticket.sql, connection: ticket.connection, impact: ticket.impact });
      this.deps.logger.info('outside write proposed', { ticket: ticketId, by: ticket.createdBy, risk: ticket.risk });
      if (!notify) return;
      const rows = ticket.impact.exactRows ?? ticket.impact.estimatedRows ?? 0;
      const choice = await vscode.window.showInformationMessage(
        `${ticket.createdBy} proposes a write (${ticket.risk} · ${rows.toLocaleString('en-US')} rows). Nothing runs until you approve it.`,
        'Review',
      );
      if (choice === 'Review') {
        await vscode.window.showTextDocument(uri, { preview: false });
        await this.deps.showPanel();
      }
    } catch (error) {
      this.deps.logger.warn('could not show an outside proposal', { ticket: ticketId, error: String(error) });
    }
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

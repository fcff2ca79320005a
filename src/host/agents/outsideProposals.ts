/**
 * Writes proposed by an agent outside this window (`pg-agent mcp` for Copilot, Claude Code, Cursor, Cline,
 * or our own language-model tools) appear at the inline approval like any held write: the proposal file
 * (.pgagent/proposals/<ticket>.sql) opens with the CodeLens, the panel shows its card, and the person's
 * decision is recorded on the ticket the agent waits on. Approving here only decides it: the agent that proposed
 * it runs it with execute_approved (README "Outside agents"), and the window follows the ticket until it did.
 */
import * as vscode from 'vscode';
import { basename, join } from 'node:path';
import type { Logger } from '../../core/platform/logger';
import { proposalsDir, sqlOffset } from '../../core/approvals/proposalFiles';
import type { InlineApproval } from '../sqlApproval/inlineApproval';
import type { WindowTickets } from '../sqlApproval/windowTickets';
import { visibleSql, visibleText } from '../../shared/visibleSql';

export interface OutsideProposalsDeps {
  /** The folder holding .pgagent/ (the workspace folder, or the extension's storage). */
  rootDir: string;
  tickets: WindowTickets;
  approval: InlineApproval;
  logger: Logger;
  showPanel: () => Thenable<unknown>;
}

export class OutsideProposals implements vscode.Disposable {
  private readonly watcher: vscode.FileSystemWatcher;
  private readonly disposables: vscode.Disposable[];
  /** Tickets already looked at: a folder rescan and the file's own event must not show one twice. */
  private readonly handled = new Set<string>();

  constructor(private readonly deps: OutsideProposalsDeps) {
    // Cheap at activation: a watcher, no core code; the ticket store opens on the first proposal.
    // The folder too: a file written right after its new folder is created can slip past the watcher (the
    // folder's own watch starts a moment later), so the folder's creation rescans it.
    this.watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(deps.rootDir), '.pgagent/proposals{,/*.sql}'),
    );
    const onFile = (uri: vscode.Uri) => {
      if (uri.fsPath.endsWith('.sql')) void this.show(uri, true);
      else
        void this.scan(true).catch((error: unknown) =>
          deps.logger.warn('could not read the proposals folder', { error: String(error) }),
        );
    };
    this.disposables = [this.watcher, this.watcher.onDidCreate(onFile), this.watcher.onDidChange(onFile)];
  }

  /** Proposals still pending (or approved and not yet run by their agent) from before this window opened get their lens and card back. */
  restoreAll(): Promise<void> {
    return this.scan(false);
  }

  private async scan(notify: boolean): Promise<void> {
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
      if (type === vscode.FileType.File && name.endsWith('.sql'))
        await this.show(vscode.Uri.file(join(dir.fsPath, name)), notify);
    }
  }

  private async show(uri: vscode.Uri, notify: boolean): Promise<void> {
    const ticketId = basename(uri.fsPath, '.sql');
    if (this.handled.has(ticketId) || this.deps.approval.view().approvals.some((a) => a.ticketId === ticketId)) return;
    this.handled.add(ticketId);
    try {
      const ticket = await (await this.deps.tickets.ticketStore()).get(ticketId);
      if (ticket?.status !== 'PENDING_APPROVAL' && ticket?.status !== 'APPROVED') {
        this.deps.logger.info('proposal no longer pending; not shown', {
          ticket: ticketId,
          status: ticket?.status ?? 'missing',
        });
        return;
      }
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      const start = sqlOffset(text, ticket.sql);
      if (start === undefined) {
        this.deps.logger.warn("a proposal file does not hold its ticket's SQL; not shown", {
          ticket: ticketId,
          file: uri.fsPath,
        });
        return;
      }
      // The executor rule: an outside agent's proposal is run only by that agent (execute_approved); here it is decided.
      // A guard client's transaction is one card: its statements (the ticket's SQL, in order) and their measured effects.
      const transaction = ticket.origin === 'guardTransaction' ? ticket.transaction : undefined;
      const held = {
        ticketId,
        uri,
        start,
        end: start + ticket.sql.length,
        sql: ticket.sql,
        connection: ticket.connection,
        impact: ticket.impact,
        proposedBy: ticket.createdBy,
        ...(transaction ? { transaction } : {}),
      };
      if (ticket.status === 'APPROVED') {
        // Approved before this window saw it (a terminal, a reload): shown waiting for its agent, nothing to decide.
        this.deps.approval.trackApproved(held);
        this.deps.logger.info('outside proposal already approved; waiting for its agent', {
          ticket: ticketId,
          by: ticket.createdBy,
        });
        return;
      }
      this.deps.approval.track(held);
      this.deps.logger.info('outside write proposed', { ticket: ticketId, by: ticket.createdBy, risk: ticket.risk });
      if (!notify) return;
      const rows = ticket.impact.exactRows ?? ticket.impact.estimatedRows ?? 0;
      // The editor shows the file's raw SQL: say here already when it holds hidden characters (they are marked there too).
      const hidden = visibleSql(ticket.sql).hidden.length;
      const flag =
        hidden > 0 ? ` Its SQL holds ${hidden} hidden character${hidden === 1 ? '' : 's'}: review it with care.` : '';
      const choice = await vscode.window.showInformationMessage(
        transaction
          ? `${visibleText(ticket.createdBy)} proposes a transaction of ${transaction.statements.length} statements (${ticket.risk} · ${rows.toLocaleString('en-US')} rows). Nothing commits until you approve it; then the client's retry commits it.${flag}`
          : `${visibleText(ticket.createdBy)} proposes a write (${ticket.risk} · ${rows.toLocaleString('en-US')} rows). Nothing runs until you approve it.${flag}`,
        'Review',
      );
      if (choice === 'Review') {
        await vscode.window.showTextDocument(uri, { preview: false });
        await this.deps.showPanel();
      }
    } catch (error) {
      this.handled.delete(ticketId);
      this.deps.logger.warn('could not show an outside proposal', { ticket: ticketId, error: String(error) });
    }
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

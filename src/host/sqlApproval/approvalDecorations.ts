/**
 * What the inline approval draws in editors: the CodeLens above each write (risk and rows in the title, the
 * decision buttons, what became of it), the hover with its impact, diagnostics (a syntax error, each hidden
 * character of a waiting write), and the edit tracking that keeps offsets in step and reports an edit inside a
 * statement (the inline approval voids its ticket and re-checks it).
 */
import * as vscode from 'vscode';
import type { Logger } from '../../core/platform/logger';
import { clock } from '../../shared/clock';
import { hiddenWarning, visibleSql, visibleText } from '../../shared/visibleSql';
import { fenced } from './approvalTexts';
import type { ApprovalEntries, ApprovalEntry } from './approvalEntries';
import { notRunYet } from './approvalEntries';
import { hiddenCharacterMarks, pendingLenses } from './approvalTexts';
import { runsInThisWindow } from '../../core/approvals/executorRule';

export class ApprovalDecorations implements vscode.CodeLensProvider, vscode.HoverProvider, vscode.Disposable {
  private readonly diagnostics = vscode.languages.createDiagnosticCollection('postgresAgent');
  private readonly disposables: vscode.Disposable[];
  readonly onDidChangeCodeLenses: vscode.Event<void>;

  constructor(
    private readonly entries: ApprovalEntries,
    private readonly logger: Logger,
    /** The text of a statement was edited (its entry's offsets already cover the new text). */
    private readonly edited: (entry: ApprovalEntry) => void,
  ) {
    this.onDidChangeCodeLenses = entries.onDidChangeLenses;
    this.disposables = [
      this.diagnostics,
      vscode.workspace.onDidChangeTextDocument((e) => this.onEdit(e)),
      vscode.languages.registerCodeLensProvider({ scheme: '*' }, this),
      vscode.languages.registerHoverProvider({ scheme: '*' }, this),
    ];
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    for (const t of this.entries.values()) {
      if (t.uri.toString() !== document.uri.toString()) continue;
      const range = new vscode.Range(document.positionAt(t.start), document.positionAt(t.start));
      const lens = (title: string, command: string, ...args: unknown[]) =>
        lenses.push(new vscode.CodeLens(range, { title, command, arguments: args }));
      switch (t.status) {
        case 'pending':
          for (const l of pendingLenses(t.impact, t.sql, runsInThisWindow(t))) lens(l.title, l.command, t.ticketId);
          break;
        case 'stale':
          lens('$(refresh) Changed — re-check impact', 'postgresAgent.recheckImpact', t.ticketId);
          break;
        case 'approved':
          lens(
            t.transaction
              ? "$(check) Approved — waiting for the client's retry to commit it"
              : '$(check) Approved — waiting for the agent to run it',
            'postgresAgent.showImpact',
            t.ticketId,
          );
          break;
        case 'running':
          lens('$(sync~spin) Running…', 'postgresAgent.showImpact', t.ticketId);
          break;
        case 'executed':
          if (t.executed) {
            lens(
              `$(pass) Executed ${clock(t.executed.at)} · ${t.executed.rows.toLocaleString('en-US')} rows`,
              'postgresAgent.showImpact',
              t.ticketId,
            );
            lens('Undo script', 'postgresAgent.openUndoScript', t.ticketId);
          } else lens('$(pass) Executed by the agent that proposed it', 'postgresAgent.showImpact', t.ticketId);
          break;
        case 'rejected':
          lens('$(circle-slash) Rejected — nothing ran', 'postgresAgent.showImpact', t.ticketId);
          break;
        case 'failed':
          // Refused by the team's approval policy: nothing ran and the ticket is still approved.
          if (t.error?.code === 'APPROVAL_POLICY')
            lens(`$(shield) Not run yet: ${t.error.message}`, 'postgresAgent.showImpact', t.ticketId);
          // Issue 25: its lock was held by others; nothing ran and the ticket is still approved.
          else if (t.error?.code === 'LOCK_UNAVAILABLE')
            lens(`$(lock) Not run yet: ${t.error.message}`, 'postgresAgent.showImpact', t.ticketId);
          else lens(`$(error) Failed, rolled back: ${t.error?.message ?? ''}`, 'postgresAgent.showImpact', t.ticketId);
          if (notRunYet(t) && runsInThisWindow(t))
            lens('$(play) Run again', 'postgresAgent.runApprovedAgain', t.ticketId);
          lens('Re-check impact', 'postgresAgent.recheckImpact', t.ticketId);
          break;
      }
    }
    return lenses;
  }

  provideHover(document: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const offset = document.offsetAt(position);
    const t = this.entries
      .values()
      .find((x) => x.uri.toString() === document.uri.toString() && offset >= x.start && offset <= x.end);
    if (!t) return undefined;
    const md = new vscode.MarkdownString(
      `**${t.impact.risk}** · estimate ${t.impact.estimatedRows ?? 'n/a'} · exact ${t.impact.exactRows ?? 'n/a'} · preview ${t.impact.previewMs} ms\n\n`,
    );
    const shown = visibleSql(t.sql);
    if (shown.hidden.length > 0) {
      md.appendMarkdown(
        `**⚠ This statement ${hiddenWarning(shown.hidden)}.** What runs, every character shown:\n\n${fenced(shown.text, 'sql')}\n\n`,
      );
    }
    md.appendMarkdown('| table | via | inserted | updated | deleted |\n|---|---|---:|---:|---:|\n');
    for (const x of t.impact.tables)
      md.appendMarkdown(
        `| ${visibleText(`${x.schema}.${x.name}`)} | ${x.via} | ${x.inserted} | ${x.updated} | ${x.deleted} |\n`,
      );
    if (t.impact.wouldFail)
      md.appendMarkdown(`\n**Would fail:** ${visibleText(t.impact.wouldFail.message)} (${t.impact.wouldFail.code})\n`);
    return new vscode.Hover(md);
  }

  /** Clears a document's marks before its SQL is checked again. */
  clear(uri: vscode.Uri): void {
    this.diagnostics.delete(uri);
  }

  /** The parser's syntax error, at its character. */
  markSyntaxError(document: vscode.TextDocument, offset: number, message: string): void {
    const at = document.positionAt(offset);
    const diagnostic = new vscode.Diagnostic(
      new vscode.Range(at, at.translate(0, 1)),
      message,
      vscode.DiagnosticSeverity.Error,
    );
    diagnostic.source = 'Postgres Agent';
    this.diagnostics.set(document.uri, [diagnostic]);
  }

  /**
   * A warning on each hidden character of the writes waiting in a document (an outside agent's proposal file
   * shows its raw SQL): the editor may draw them as nothing, but they run.
   */
  async markHidden(uri: vscode.Uri): Promise<void> {
    const waiting = this.entries
      .values()
      .filter((t) => t.uri.toString() === uri.toString() && (t.status === 'pending' || t.status === 'running'));
    const marks = waiting.flatMap((t) => hiddenCharacterMarks(t.sql, t.start));
    if (marks.length === 0) return;
    try {
      const document = await vscode.workspace.openTextDocument(uri);
      this.diagnostics.set(
        uri,
        marks.map((m) => {
          const diagnostic = new vscode.Diagnostic(
            new vscode.Range(document.positionAt(m.offset), document.positionAt(m.offset + m.length)),
            m.message,
            vscode.DiagnosticSeverity.Warning,
          );
          diagnostic.source = 'Postgres Agent';
          return diagnostic;
        }),
      );
    } catch (error) {
      this.logger.warn('could not mark hidden characters', { file: uri.toString(), error: String(error) });
    }
  }

  /** Keeps offsets in step with edits around a statement; an edit inside it is reported. */
  private onEdit(event: vscode.TextDocumentChangeEvent): void {
    for (const t of this.entries.values()) {
      if (t.uri.toString() !== event.document.uri.toString() || event.contentChanges.length === 0) continue;
      let touched = false;
      for (const change of event.contentChanges) {
        const delta = change.text.length - change.rangeLength;
        const changeEnd = change.rangeOffset + change.rangeLength;
        if (changeEnd < t.start) {
          t.start += delta;
          t.end += delta;
        } else if (change.rangeOffset <= t.end) {
          touched = true;
          t.end += delta;
        }
      }
      if (touched) this.edited(t);
    }
    this.entries.lensesMoved();
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

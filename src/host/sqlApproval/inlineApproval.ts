/**
 * The inline approval (UX.md; command "Run SQL with Review" keeps its id): reads show their rows in the panel; a
 * write stays in its editor with CodeLens actions (risk and rows in the title) and its impact in the panel;
 * editing the statement voids the ticket and re-checks the impact; nothing runs without a person's click.
 * This class checks SQL and takes held writes in; what it shows lives in `ApprovalEntries`, the editor side in
 * `ApprovalDecorations`, decisions and execution in `HeldWriteDecisions`, the ticket store in `WindowTickets`.
 */
import * as vscode from 'vscode';
import { userInfo } from 'node:os';
import type { Ticket } from '../../core/approvals/ticket';
import type { Logger } from '../../core/platform/logger';
import type { ApprovalStatus, ApprovalView, ImpactView, ResultsView } from '../../shared/protocol';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';
import { workspaceTrusted } from '../settings/workspaceTrust';
import { ApprovalDecorations } from './approvalDecorations';
import type { ApprovalEntry, HeldWrite } from './approvalEntries';
import { ApprovalEntries, isOpen } from './approvalEntries';
import type { HeldWriteDecisionsPort } from './heldWriteDecisions';
import { HeldWriteDecisions } from './heldWriteDecisions';
import type { WindowTickets } from './windowTickets';

/** Quiet time after an edit before the impact is checked again. */
const RECHECK_DELAY_MS = 1000;

/** The core's check of SQL and its impact report, loaded when called (host/compose/sqlApprovalPorts.ts). */
export type InlineApprovalPort = Pick<CoreServices, 'runSql' | 'workspacePaths' | 'saveImpactReport' | 'toAgentError'>;

export interface InlineApprovalDeps {
  port: InlineApprovalPort;
  /** Deciding and running held writes, and the settings of an action (host/compose/heldWriteDecisionsPort.ts). */
  decisions: HeldWriteDecisionsPort;
  session: DatabaseSession;
  tickets: WindowTickets;
  /** The workspace folder, when one is open (impact reports are kept there). */
  workspaceDir: string | undefined;
  /** Where .pgagent/ lives: the workspace folder, else the extension's storage. */
  rootDir: string;
  logger: Logger;
  showPanel(): Thenable<unknown>;
}

export class InlineApproval implements vscode.Disposable {
  private readonly entries = new ApprovalEntries();
  private readonly decorations: ApprovalDecorations;
  private readonly decisions: HeldWriteDecisions;
  private readonly readDone = new vscode.EventEmitter<ResultsView>();
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  /** A read of Run SQL with Review has rows (the results view opens them). */
  readonly onDidRead = this.readDone.event;
  /** An approval was added, moved on, or a read has rows: push the panel. */
  readonly onDidChange = this.entries.onDidChange;

  constructor(private readonly deps: InlineApprovalDeps) {
    this.decisions = new HeldWriteDecisions({
      port: deps.decisions,
      session: deps.session,
      tickets: deps.tickets,
      entries: this.entries,
      logger: deps.logger,
      openUndo: (id) => this.openUndo(id),
    });
    this.decorations = new ApprovalDecorations(this.entries, deps.logger, (t) => this.edited(t));
  }

  view(): { results: ResultsView | null; approvals: ApprovalView[] } {
    return this.entries.view();
  }

  /** A person's decision on a shown write (CodeLens, panel, cockpit or palette). */
  decide(ticketId: string, approve: boolean): Promise<void> {
    return this.decisions.decide(ticketId, approve);
  }

  /** Runs again an approved write that did not run yet (its lock was held by others, or the policy not yet met). */
  runAgain(ticketId: string): Promise<void> {
    return this.decisions.runAgain(ticketId);
  }

  /** The selection, or the whole document when nothing is selected. */
  async runFromEditor(editor: vscode.TextEditor | undefined): Promise<void> {
    if (!editor) {
      void vscode.window.showWarningMessage(
        'Open a .sql file or select SQL in an editor, then run "Run SQL with Review".',
      );
      return;
    }
    const document = editor.document;
    const selection = editor.selection;
    const start = selection.isEmpty ? 0 : document.offsetAt(selection.start);
    const end = selection.isEmpty ? document.getText().length : document.offsetAt(selection.end);
    await this.check(document, start, end);
  }

  /**
   * The results grid's edits (issue 33): their SQL in a new editor, checked as Run SQL with Review checks it (the
   * same impact, ticket, CodeLens and card); the write it holds (or auto-approved and ran), if any.
   */
  async reviewInEditor(sql: string): Promise<{ ticketId: string; impact: ImpactView } | undefined> {
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: sql });
    // Beside the grid, never over it: the grid shows the rows again once the write ran.
    await vscode.window.showTextDocument(document, { preview: false, viewColumn: vscode.ViewColumn.Beside });
    const entry = await this.check(document, 0, sql.length);
    return entry && { ticketId: entry.ticketId, impact: entry.impact };
  }

  /**
   * Resolves once a write shown here is no longer open: executed (with its rows), failed or rejected; `replaced`
   * when its SQL was edited in the editor and re-checked as a write of its own.
   */
  settled(ticketId: string): Promise<{ status: ApprovalStatus | 'replaced'; rows?: number }> {
    return new Promise((resolve) => {
      const done = (): boolean => {
        const entry = this.entries.get(ticketId);
        if (entry && isOpen(entry.status)) return false;
        resolve(
          entry
            ? { status: entry.status, ...(entry.executed ? { rows: entry.executed.rows } : {}) }
            : { status: 'replaced' },
        );
        return true;
      };
      if (done()) return;
      const listener = this.entries.onDidChange(() => {
        if (done()) listener.dispose();
      });
    });
  }

  /** Checks a statement of a document: a read shows its rows, a write is held here (or runs when auto-approved). */
  private async check(
    document: vscode.TextDocument,
    start: number,
    end: number,
    replacing?: ApprovalEntry,
  ): Promise<ApprovalEntry | undefined> {
    const sql = document.getText().slice(start, end);
    this.decorations.clear(document.uri);
    try {
      const { key, outcome: o } = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Postgres Agent', cancellable: false },
        async (progress) => {
          progress.report({ message: 'Checking the SQL…' });
          const { db, key } = await this.deps.session.database();
          progress.report({ message: 'Previewing its impact…' });
          return {
            key,
            outcome: await this.deps.port.runSql(db, await this.deps.tickets.ticketStore(), {
              sql,
              connection: key,
              requestedBy: userInfo().username,
              settings: await this.deps.decisions.settings(),
              // The person's own SQL: writes within postgresAgent.approval.autoApproveMaxRisk may run at once.
              // Never in a workspace VS Code does not trust: there every write waits (and does not run).
              autoApprove: workspaceTrusted(),
              undoDir: this.deps.port.workspacePaths(this.deps.rootDir).undo,
              logger: this.deps.logger,
              // The identical statement held again finds its pending ticket (impact measured again): one card.
              reusePending: true,
            }),
          };
        },
      );
      const at = { uri: document.uri, start, end, sql, connection: key };
      switch (o.status) {
        case 'executed':
          this.entries.results = {
            sql,
            fields: o.result.fields,
            rows: o.result.rows,
            rowCount: o.result.rowCount,
            truncated: o.result.truncated,
            elapsedMs: o.result.elapsedMs,
          };
          this.readDone.fire(this.entries.results);
          this.entries.refresh();
          await this.deps.showPanel();
          return;
        case 'refused':
          void vscode.window.showErrorMessage(
            `Refused: ${o.classification.reasons.join('; ')}. This never runs through Postgres Agent.`,
          );
          return;
        case 'written': {
          const executed = { at: new Date().toISOString(), rows: o.execution.rows, undoFile: o.execution.undoFile };
          const entry = await this.keep(
            {
              ...at,
              ticketId: o.ticket.id,
              impact: o.impact,
              status: 'executed',
              executed,
              watch: new AbortController(),
            },
            o.ticket,
            replacing,
          );
          void vscode.window
            .showInformationMessage(
              `Auto-approved by postgresAgent.approval.autoApproveMaxRisk (${o.impact.risk}): ${o.execution.rows.toLocaleString('en-US')} rows changed.`,
              'Open Undo Script',
            )
            .then((choice) => {
              if (choice) void this.openUndo(o.ticket.id);
            });
          return entry;
        }
        case 'held': {
          const entry = await this.keep(
            { ...at, ticketId: o.ticket.id, impact: o.impact, status: 'pending', watch: new AbortController() },
            o.ticket,
            replacing,
          );
          this.decisions.watchForDecision(entry);
          this.deps.logger.info('write held for approval', { ticket: o.ticket.id, risk: o.impact.risk });
          await this.deps.showPanel();
          return entry;
        }
      }
      return undefined;
    } catch (error) {
      const e = this.deps.port.toAgentError(error);
      if (e.code === 'SQL_SYNTAX' && 'position' in e && typeof e.position === 'number')
        this.decorations.markSyntaxError(document, start + e.position, e.message);
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
      return undefined;
    }
  }

  /**
   * Shows a write held elsewhere with the same CodeLens, card and decision as our own: an ask run or a job (the
   * owner executes it), or an outside agent's proposal (`proposedBy`: approving here only decides; the agent runs it).
   */
  track(held: HeldWrite): void {
    if (this.entries.get(held.ticketId)) return;
    const entry: ApprovalEntry = { ...held, status: 'pending', watch: new AbortController() };
    this.entries.add(entry);
    this.decisions.watchForDecision(entry);
    this.deps.logger.info('write held elsewhere tracked for approval', {
      ticket: held.ticketId,
      risk: held.impact.risk,
    });
    void this.decorations.markHidden(entry.uri);
  }

  /** An outside agent's proposal approved before this window saw it (a reload, a terminal): shown waiting for its agent. */
  trackApproved(held: HeldWrite & { proposedBy: string }): void {
    if (this.entries.get(held.ticketId)) return;
    const entry: ApprovalEntry = { ...held, status: 'approved', decidedHere: true, watch: new AbortController() };
    this.entries.add(entry);
    this.decisions.awaitAgent(entry);
  }

  /** Records a write's card and lens (replacing the one it was re-checked from) and keeps its impact report. */
  private async keep(
    entry: ApprovalEntry,
    ticket: Ticket,
    replacing: ApprovalEntry | undefined,
  ): Promise<ApprovalEntry> {
    if (this.deps.workspaceDir)
      await this.deps.port.saveImpactReport(this.deps.port.workspacePaths(this.deps.workspaceDir).impact, ticket);
    this.entries.add(entry, replacing);
    void this.decorations.markHidden(entry.uri);
    return entry;
  }

  async openUndo(ticketId: string): Promise<void> {
    const file = this.entries.get(ticketId)?.executed?.undoFile;
    if (file) await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
  }

  async openSql(ticketId: string): Promise<void> {
    const t = this.entries.get(ticketId);
    if (!t) return;
    const document = await vscode.workspace.openTextDocument(t.uri);
    await vscode.window.showTextDocument(document, {
      selection: new vscode.Range(document.positionAt(t.start), document.positionAt(t.end)),
    });
  }

  /**
   * "Use the safer statement" (issue 10): the safer SQL of the ticket's own lint finding goes through the same
   * check as any SQL a person runs, in a new editor, and gets its own ticket; the original stays pending until
   * someone rejects it (nothing is decided on the person's behalf).
   */
  async useSaferSql(ticketId: string, rule: string): Promise<void> {
    const saferSql = ((this.entries.get(ticketId)?.impact as Partial<ImpactView> | undefined)?.lint ?? []).find(
      (l) => l.rule === rule,
    )?.saferSql;
    if (saferSql === undefined) {
      void vscode.window.showWarningMessage('That write has no safer statement to offer any more.');
      return;
    }
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: saferSql });
    await vscode.window.showTextDocument(document, { preview: false });
    await this.check(document, 0, saferSql.length);
  }

  async recheck(ticketId: string): Promise<void> {
    const t = this.entries.get(ticketId);
    if (!t) return;
    const document = await vscode.workspace.openTextDocument(t.uri);
    await this.check(document, t.start, t.end, t);
  }

  /** An edit inside a statement: a pending ticket is voided, and the statement is checked again once the typing stops. */
  private edited(t: ApprovalEntry): void {
    const open = t.status === 'pending' || t.status === 'stale';
    if (t.status === 'pending') void this.decisions.voidTicket(t);
    if (!open) return;
    clearTimeout(this.rechecks.get(t.ticketId));
    this.rechecks.set(
      t.ticketId,
      setTimeout(() => {
        this.rechecks.delete(t.ticketId);
        if (this.entries.get(t.ticketId)?.status === 'stale') void this.recheck(t.ticketId);
      }, RECHECK_DELAY_MS),
    );
  }

  dispose(): void {
    for (const timer of this.rechecks.values()) clearTimeout(timer);
    this.decorations.dispose();
    this.entries.dispose();
    this.readDone.dispose();
  }
}

/**
 * "Run SQL with Review" and the inline approval (UX.md): reads show their rows in the panel; a write
 * stays in its editor with CodeLens actions (risk and rows in the title) and its impact in the panel;
 * editing the statement voids the ticket and re-checks the impact; nothing runs without a person's click.
 */
import * as vscode from 'vscode';
import { userInfo } from 'node:os';
import type { SigningKey } from '../../core/approvals/approvalPath';
import type { DecisionScope, Ticket } from '../../core/approvals/ticket';
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { Logger } from '../../core/platform/logger';
import { clock } from '../../shared/clock';
import type { ErrorInfo } from '../../shared/errorCodes';
import type { ApprovalStatus, ApprovalView, ImpactView, ResultsView } from '../../shared/protocol';
import type { DatabaseSession } from '../connection/databaseSession';
import { coreServices } from '../lazyServices';
import { approvalConfirmation, hiddenCharacterMarks, pendingLenses } from './approvalTexts';
import { redisUrl, safetySettings } from '../settings/settings';
import { hiddenWarning, visibleSql, visibleText } from '../../shared/visibleSql';
import { fenced } from '../agents/lmToolMessages';
import { untrustedRefusal, workspaceTrusted } from '../settings/workspaceTrust';

/**
 * A write held by someone else (an ask run): SqlReview shows it and takes the decision, but the owner
 * executes it, so the ticket is consumed exactly once, by the owner's run.
 */
export interface HeldWriteOwner {
  /** Runs the approved ticket once and says what it did; throws when it did not run. */
  execute(): Promise<{ rows: number; tables: { via: string; inserted: number; updated: number; deleted: number }[]; undoFile: string }>;
  /** The ticket was rejected, voided or expired: the owner finishes its run. */
  rejected(): Promise<void>;
}

interface Tracked {
  ticketId: string;
  uri: vscode.Uri;
  /** Offsets of the statement in its document, kept up to date as the text around it is edited. */
  start: number;
  end: number;
  sql: string;
  connection: string;
  status: ApprovalStatus;
  impact: ImpactView;
  executed?: { at: string; rows: number; undoFile: string };
  error?: ErrorInfo;
  /** Set when this window makes the decision, so the decision watcher does not act on it a second time. */
  decidedHere?: boolean;
  /** Stops waiting for a teammate's decision. */
  watch: AbortController;
  /** Set when the write belongs to an ask run, which executes it. */
  owner?: HeldWriteOwner;
  decisions?: ApprovalView['decisions'];
}

/** Quiet time after an edit before the impact is checked again. */
const RECHECK_DELAY_MS = 1000;

/** Decided approvals stay in the panel for reference, the newest few only. */
const FINISHED_SHOWN = 3;
/** Errors after which nothing ran and the ticket is still approved: the write can be run again as it is. */
const NOT_RUN_YET: readonly string[] = ['APPROVAL_POLICY', 'LOCK_UNAVAILABLE'];

export class SqlReview implements vscode.CodeLensProvider, vscode.HoverProvider, vscode.Disposable {
  /** The key this window's decisions are signed with (SecretStorage); none: unsigned, under the OS user name. */
  signingKey: () => Promise<SigningKey | undefined> = () => Promise.resolve(undefined);
  private readonly tracked = new Map<string, Tracked>();
  private results: ResultsView | null = null;
  private store: Promise<TicketStore> | undefined;
  private readonly diagnostics = vscode.languages.createDiagnosticCollection('postgresAgent');
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly readDone = new vscode.EventEmitter<ResultsView>();
  /** A read of Run SQL with Review has rows (the results view opens them). */
  readonly onDidRead = this.readDone.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[];
  readonly onDidChange = this.changed.event;
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  constructor(
    private readonly session: DatabaseSession,
    private readonly workspaceDir: string | undefined,
    private readonly storageDir: string,
    private readonly logger: Logger,
    private readonly showPanel: () => Thenable<unknown>,
  ) {
    this.disposables = [
      this.diagnostics,
      vscode.workspace.onDidChangeTextDocument((e) => this.onEdit(e)),
      vscode.languages.registerCodeLensProvider({ scheme: '*' }, this),
      vscode.languages.registerHoverProvider({ scheme: '*' }, this),
    ];
  }

  view(): { results: ResultsView | null; approvals: ApprovalView[] } {
    const newestFirst = [...this.tracked.values()].reverse();
    const open = newestFirst.filter((t) => t.status === 'pending' || t.status === 'stale' || t.status === 'running');
    const done = newestFirst.filter((t) => !open.includes(t)).slice(0, FINISHED_SHOWN);
    return {
      results: this.results,
      approvals: [...open, ...done].map((t): ApprovalView => ({
        ticketId: t.ticketId,
        sql: t.sql,
        status: t.status,
        impact: t.impact,
        ...(t.executed ? { executed: t.executed } : {}),
        ...(t.error ? { error: t.error } : {}),
        ...(t.decisions ? { decisions: t.decisions } : {}),
      })),
    };
  }

  /** The selection, or the whole document when nothing is selected. */
  async runFromEditor(editor: vscode.TextEditor | undefined): Promise<void> {
    if (!editor) {
      void vscode.window.showWarningMessage('Open a .sql file or select SQL in an editor, then run "Run SQL with Review".');
      return;
    }
    const document = editor.document;
    const selection = editor.selection;
    const start = selection.isEmpty ? 0 : document.offsetAt(selection.start);
    const end = selection.isEmpty ? document.getText().length : document.offsetAt(selection.end);
    await this.review(document, start, end);
  }

  private async review(document: vscode.TextDocument, start: number, end: number, replacing?: Tracked): Promise<void> {
    const sql = document.getText().slice(start, end);
    this.diagnostics.delete(document.uri);
    const services = coreServices();
    try {
      const outcome = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Postgres Agent', cancellable: false },
        async (progress) => {
          progress.report({ message: 'Checking the SQL…' });
          const { db, key } = await this.session.database();
          progress.report({ message: 'Previewing its impact…' });
          return {
            key,
            outcome: await services.runSql(db, await this.ticketStore(), {
              sql,
              connection: key,
              requestedBy: userInfo().username,
              settings: await safetySettings(this.workspaceDir ?? this.storageDir),
              // The person's own SQL: writes within postgresAgent.approval.autoApproveMaxRisk may run at once.
              // Never in a workspace VS Code does not trust: there every write waits (and does not run).
              autoApprove: workspaceTrusted(),
              undoDir: services.workspacePaths(this.workspaceDir ?? this.storageDir).undo,
              logger: this.logger,
            }),
          };
        },
      );
      const { outcome: o } = outcome;
      switch (o.status) {
        case 'executed':
          this.results = { sql, fields: o.result.fields, rows: o.result.rows, rowCount: o.result.rowCount, truncated: o.result.truncated, elapsedMs: o.result.elapsedMs };
          this.readDone.fire(this.results);
          this.changed.fire();
          await this.showPanel();
          return;
        case 'refused':
          void vscode.window.showErrorMessage(`Refused: ${o.classification.reasons.join('; ')}. This never runs through Postgres Agent.`);
          return;
        case 'written': {
          const undoFile = o.execution.undoFile;
          await this.trackWrite({ ticketId: o.ticket.id, uri: document.uri, start, end, sql, connection: outcome.key, impact: o.impact, status: 'executed', executed: { at: new Date().toISOString(), rows: o.execution.rows, undoFile } }, o.ticket, replacing);
          void vscode.window.showInformationMessage(
            `Auto-approved by postgresAgent.approval.autoApproveMaxRisk (${o.impact.risk}): ${o.execution.rows.toLocaleString('en-US')} rows changed.`,
            'Open Undo Script',
          ).then((choice) => {
            if (choice) void this.openUndo(o.ticket.id);
          });
          return;
        }
        case 'held': {
          const tracked = await this.trackWrite({ ticketId: o.ticket.id, uri: document.uri, start, end, sql, connection: outcome.key, impact: o.impact, status: 'pending' }, o.ticket, replacing);
          this.watchForDecision(tracked);
          this.logger.info('write held for approval', { ticket: o.ticket.id, risk: o.impact.risk });
          await this.showPanel();
          return;
        }
      }
    } catch (error) {
      const e = services.toAgentError(error);
      if (e.code === 'SQL_SYNTAX' && 'position' in e && typeof e.position === 'number') {
        const at = document.positionAt(start + e.position);
        const diagnostic = new vscode.Diagnostic(new vscode.Range(at, at.translate(0, 1)), e.message, vscode.DiagnosticSeverity.Error);
        diagnostic.source = 'Postgres Agent';
        this.diagnostics.set(document.uri, [diagnostic]);
      }
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
    }
  }

  /**
   * Shows a write held elsewhere with the same CodeLens, card and decision as our own: an ask run or a job
   * (the owner executes it), or an outside agent's proposal (no owner: approving here runs it here).
   */
  track(held: { ticketId: string; uri: vscode.Uri; start: number; end: number; sql: string; connection: string; impact: ImpactView; owner?: HeldWriteOwner }): void {
    if (this.tracked.has(held.ticketId)) return;
    const tracked: Tracked = { ...held, status: 'pending', watch: new AbortController() };
    this.tracked.set(held.ticketId, tracked);
    this.watchForDecision(tracked);
    this.logger.info('write held elsewhere tracked for approval', { ticket: held.ticketId, risk: held.impact.risk });
    this.refresh();
    void this.markHidden(tracked.uri);
  }

  /** Records a write's card and lens (replacing the one it was re-checked from) and keeps its impact report. */
  private async trackWrite(entry: Omit<Tracked, 'watch'>, ticket: Ticket, replacing: Tracked | undefined): Promise<Tracked> {
    const services = coreServices();
    if (this.workspaceDir) await services.saveImpactReport(services.workspacePaths(this.workspaceDir).impact, ticket);
    if (replacing) {
      replacing.watch.abort();
      this.tracked.delete(replacing.ticketId);
    }
    const tracked: Tracked = { ...entry, watch: new AbortController() };
    this.tracked.set(tracked.ticketId, tracked);
    this.refresh();
    void this.markHidden(tracked.uri);
    return tracked;
  }

  /** A person's decision (CodeLens, panel button or palette); HIGH and CRITICAL ask once more. */
  async decide(ticketId: string, approve: boolean): Promise<void> {
    const t = this.tracked.get(ticketId);
    if (!t || t.status !== 'pending') {
      void vscode.window.showWarningMessage(t?.status === 'stale' ? 'The SQL changed since this impact was measured; re-check it first.' : 'This approval is no longer pending.');
      return;
    }
    // HIGH and CRITICAL, and a statement holding hidden characters, ask once more in a modal that says why.
    const confirmation = approve ? approvalConfirmation(t.impact, t.sql) : undefined;
    if (confirmation) {
      const confirm = await vscode.window.showWarningMessage(confirmation.message, { modal: true, detail: confirmation.detail }, 'Approve & run');
      if (confirm !== 'Approve & run') return;
    }
    const store = await this.ticketStore();
    const services = coreServices();
    let key: SigningKey | undefined;
    try {
      key = await this.signingKey();
    } catch (error) {
      // No passphrase, a wrong one, an unusable key: nothing was decided, the write stays pending here.
      const e = services.toAgentError(error);
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
      return;
    }
    t.decidedHere = true;
    try {
      // The one approval path, on the SQL this window showed: a ticket for other SQL refuses the decision.
      // Signed mode: the signature also binds this database's identity and pinned policy version.
      const scope = key ? await this.signingScope(t.connection) : undefined;
      await services.decideTicket(store, ticketId, {
        approve,
        ...(key ? { key } : { by: userInfo().username }),
        ...(scope ? { scope } : {}),
        seenHash: services.sqlHash(t.sql),
        comment: approve ? 'approved in VS Code' : 'rejected in VS Code',
      });
    } catch (error) {
      this.fail(t, error);
      return;
    }
    if (approve) await this.run(t);
    else {
      t.status = 'rejected';
      this.refresh();
      this.tellOwnerRejected(t);
    }
  }

  /** The database identity and pinned policy version, read from this window's database when it is the ticket's. */
  private async signingScope(connection: string): Promise<DecisionScope | undefined> {
    const { db, key } = await this.session.database();
    if (key !== connection) return undefined;
    return db.withSession((session) => coreServices().decisionScope(session));
  }

  private tellOwnerRejected(t: Tracked): void {
    t.owner?.rejected().catch((error: unknown) => this.logger.warn('could not finish the ask run of a rejected write', { ticket: t.ticketId, error: String(error) }));
  }

  /** Runs an approved ticket's exact SQL once, keeps its undo script, and says what happened. */
  private async run(t: Tracked): Promise<void> {
    t.status = 'running';
    this.refresh();
    try {
      const result = t.owner ? await t.owner.execute() : await this.execute(t);
      const undoFile = result.undoFile;
      t.status = 'executed';
      t.executed = { at: new Date().toISOString(), rows: result.rows, undoFile };
      this.refresh();
      const direct = result.tables.filter((x) => x.via === 'direct').reduce((n, x) => n + x.inserted + x.updated + x.deleted, 0);
      const summary = `Executed: ${result.rows.toLocaleString('en-US')} rows changed in ${result.tables.length} table${result.tables.length === 1 ? '' : 's'} (${direct.toLocaleString('en-US')} by the statement itself).`;
      void vscode.window.showInformationMessage(summary, 'Open Undo Script').then((choice) => {
        if (choice) void this.openUndo(t.ticketId);
      });
    } catch (error) {
      this.fail(t, error);
    }
  }

  private async execute(t: Tracked): Promise<{ rows: number; tables: { via: string; inserted: number; updated: number; deleted: number }[]; undoFile: string }> {
    const services = coreServices();
    // Said before connecting; the executor checks it again when it claims the ticket (policySources.blocked).
    const untrusted = untrustedRefusal();
    if (untrusted) throw untrusted;
    const { db, key } = await this.session.database();
    const undoDir = services.workspacePaths(this.workspaceDir ?? this.storageDir).undo;
    // The ticket's own SQL runs (parsed from the ticket), never this window's copy of it.
    const result = await services.executeApproved(db, await this.ticketStore(), t.ticketId, {
      ...(await safetySettings(this.workspaceDir ?? this.storageDir)),
      connection: key,
      by: userInfo().username,
      undo: services.workspaceUndoSink(undoDir, t.ticketId),
      logger: this.logger,
      invalidateSchema: () => this.session.invalidateSchema(),
    });
    t.decisions = await this.decisionsView(result.ticket);
    if (result.outcomeNotRecorded !== undefined) {
      // Committed is committed: the lens says executed; the ticket is resolved from the database on its next read.
      void vscode.window.showWarningMessage(`The write committed, but recording that on ticket ${t.ticketId} failed: ${result.outcomeNotRecorded}`);
    }
    return { rows: result.rows, tables: result.tables, undoFile: result.undoFile };
  }

  /**
   * Issue 25: a write that did not run because its lock was held by others (or the team's policy was not yet
   * met) is still approved: run it again, the executor re-checks everything as the first time.
   */
  async runAgain(ticketId: string): Promise<void> {
    const t = this.tracked.get(ticketId);
    if (!t || t.status !== 'failed' || !NOT_RUN_YET.includes(t.error?.code ?? '')) {
      void vscode.window.showWarningMessage('Only an approved write that did not run yet can be run again.');
      return;
    }
    t.error = undefined;
    await this.run(t);
  }

  /** Who decided a ticket, each with whether their signature verifies (the card's "Approved by alice ✓ signed"). */
  private async decisionsView(ticket: Ticket): Promise<NonNullable<ApprovalView['decisions']>> {
    const approvers = (await safetySettings(this.workspaceDir ?? this.storageDir)).approvalRules?.approvers ?? [];
    return ticket.decisions.map((d) => ({ by: d.by, approve: d.approve, signed: coreServices().signatureState(ticket, d, approvers) === 'verified' }));
  }

  private fail(t: Tracked, error: unknown): void {
    const e = coreServices().toAgentError(error);
    t.status = 'failed';
    t.error = e.toInfo();
    this.refresh();
    void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
  }

  /**
   * A teammate may decide from another window or machine (`pg-agent approvals approve`, shared Redis):
   * their approval runs the write here, as if approved in this window; a rejection or expiry ends it.
   */
  private watchForDecision(t: Tracked): void {
    void this.ticketStore()
      .then((store) => store.waitForDecision(t.ticketId, t.watch.signal))
      .then(async (ticket) => {
        if (t.decidedHere || this.tracked.get(t.ticketId) !== t || t.status !== 'pending') return;
        const last = ticket.history.at(-1);
        // Whether the decision carries a signature that verifies against approval.approvers: the person reading this can tell.
        const decision = ticket.decisions.at(-1);
        const rules = (await safetySettings(this.workspaceDir ?? this.storageDir)).approvalRules;
        t.decisions = await this.decisionsView(ticket);
        const signed = decision && rules && coreServices().signatureState(ticket, decision, rules.approvers) === 'verified' ? ', signed ✓' : '';
        const who = last ? `${last.by}${signed}${last.comment ? ` (${last.comment})` : ''}` : 'someone';
        if (ticket.status === 'APPROVED') {
          void vscode.window.showInformationMessage(`Approved by ${who}: running it now.`);
          await this.run(t);
        } else {
          t.status = 'rejected';
          t.error = { code: ticket.status === 'EXPIRED' ? 'APPROVAL_EXPIRED' : 'APPROVAL_REJECTED', message: ticket.status === 'EXPIRED' ? 'The ticket expired before anyone approved it.' : `Rejected by ${who}.` };
          this.refresh();
          this.tellOwnerRejected(t);
        }
      })
      .catch((error: unknown) => {
        if (!t.watch.signal.aborted) this.logger.warn('stopped watching a ticket for decisions', { ticket: t.ticketId, error: String(error) });
      });
  }

  async openUndo(ticketId: string): Promise<void> {
    const file = this.tracked.get(ticketId)?.executed?.undoFile;
    if (file) await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
  }

  async openSql(ticketId: string): Promise<void> {
    const t = this.tracked.get(ticketId);
    if (!t) return;
    const document = await vscode.workspace.openTextDocument(t.uri);
    await vscode.window.showTextDocument(document, { selection: new vscode.Range(document.positionAt(t.start), document.positionAt(t.end)) });
  }

  /**
   * "Use the safer statement" (issue 10): the safer SQL of the ticket's own lint finding goes through the
   * same review as any SQL a person runs, in a new editor, and gets its own ticket; the original stays
   * pending until someone rejects it (nothing is decided on the person's behalf).
   */
  async useSaferSql(ticketId: string, rule: string): Promise<void> {
    const saferSql = ((this.tracked.get(ticketId)?.impact as Partial<ImpactView> | undefined)?.lint ?? []).find((l) => l.rule === rule)?.saferSql;
    if (saferSql === undefined) {
      void vscode.window.showWarningMessage('That write has no safer statement to offer any more.');
      return;
    }
    const document = await vscode.workspace.openTextDocument({ language: 'sql', content: saferSql });
    await vscode.window.showTextDocument(document, { preview: false });
    await this.review(document, 0, saferSql.length);
  }

  async recheck(ticketId: string): Promise<void> {
    const t = this.tracked.get(ticketId);
    if (!t) return;
    const document = await vscode.workspace.openTextDocument(t.uri);
    await this.review(document, t.start, t.end, t);
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    for (const t of this.tracked.values()) {
      if (t.uri.toString() !== document.uri.toString()) continue;
      const range = new vscode.Range(document.positionAt(t.start), document.positionAt(t.start));
      const lens = (title: string, command: string, ...args: unknown[]) =>
        lenses.push(new vscode.CodeLens(range, { title, command, arguments: args }));
      switch (t.status) {
        case 'pending':
          for (const l of pendingLenses(t.impact, t.sql)) lens(l.title, l.command, t.ticketId);
          break;
        case 'stale':
          lens('$(refresh) Changed — re-check impact', 'postgresAgent.recheckImpact', t.ticketId);
          break;
        case 'running':
          lens('$(sync~spin) Running…', 'postgresAgent.showImpact', t.ticketId);
          break;
        case 'executed':
          lens(
            `$(pass) Executed ${clock(t.executed?.at)} · ${(t.executed?.rows ?? 0).toLocaleString('en-US')} rows`,
            'postgresAgent.showImpact',
            t.ticketId,
          );
          lens('Undo script', 'postgresAgent.openUndoScript', t.ticketId);
          break;
        case 'rejected':
          lens('$(circle-slash) Rejected — nothing ran', 'postgresAgent.showImpact', t.ticketId);
          break;
        case 'failed':
          // Refused by the team's approval policy: nothing ran and the ticket is still approved.
          if (t.error?.code === 'APPROVAL_POLICY') lens(`$(shield) Not run yet: ${t.error.message}`, 'postgresAgent.showImpact', t.ticketId);
          // Issue 25: its lock was held by others; nothing ran and the ticket is still approved.
          else if (t.error?.code === 'LOCK_UNAVAILABLE') lens(`$(lock) Not run yet: ${t.error.message}`, 'postgresAgent.showImpact', t.ticketId);
          else lens(`$(error) Failed, rolled back: ${t.error?.message ?? ''}`, 'postgresAgent.showImpact', t.ticketId);
          if (NOT_RUN_YET.includes(t.error?.code ?? '')) lens('$(play) Run again', 'postgresAgent.runApprovedAgain', t.ticketId);
          lens('Re-check impact', 'postgresAgent.recheckImpact', t.ticketId);
          break;
      }
    }
    return lenses;
  }

  provideHover(document: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const offset = document.offsetAt(position);
    const t = [...this.tracked.values()].find((x) => x.uri.toString() === document.uri.toString() && offset >= x.start && offset <= x.end);
    if (!t) return undefined;
    const md = new vscode.MarkdownString(`**${t.impact.risk}** · estimate ${t.impact.estimatedRows ?? 'n/a'} · exact ${t.impact.exactRows ?? 'n/a'} · preview ${t.impact.previewMs} ms\n\n`);
    const shown = visibleSql(t.sql);
    if (shown.hidden.length > 0) {
      md.appendMarkdown(`**⚠ This statement ${hiddenWarning(shown.hidden)}.** What runs, every character shown:\n\n${fenced(shown.text, 'sql')}\n\n`);
    }
    md.appendMarkdown('| table | via | inserted | updated | deleted |\n|---|---|---:|---:|---:|\n');
    for (const x of t.impact.tables) md.appendMarkdown(`| ${visibleText(`${x.schema}.${x.name}`)} | ${x.via} | ${x.inserted} | ${x.updated} | ${x.deleted} |\n`);
    if (t.impact.wouldFail) md.appendMarkdown(`\n**Would fail:** ${visibleText(t.impact.wouldFail.message)} (${t.impact.wouldFail.code})\n`);
    return new vscode.Hover(md);
  }

  /**
   * A warning on each hidden character of the writes waiting in a document (an outside agent's proposal file
   * shows its raw SQL): the editor may draw them as nothing, but they run.
   */
  private async markHidden(uri: vscode.Uri): Promise<void> {
    const waiting = [...this.tracked.values()].filter((t) => t.uri.toString() === uri.toString() && (t.status === 'pending' || t.status === 'running'));
    const marks = waiting.flatMap((t) => hiddenCharacterMarks(t.sql, t.start));
    if (marks.length === 0) return;
    try {
      const document = await vscode.workspace.openTextDocument(uri);
      this.diagnostics.set(
        uri,
        marks.map((m) => {
          const diagnostic = new vscode.Diagnostic(new vscode.Range(document.positionAt(m.offset), document.positionAt(m.offset + m.length)), m.message, vscode.DiagnosticSeverity.Warning);
          diagnostic.source = 'Postgres Agent';
          return diagnostic;
        }),
      );
    } catch (error) {
      this.logger.warn('could not mark hidden characters', { file: uri.toString(), error: String(error) });
    }
  }

  /** Keeps offsets in step with edits around a statement; an edit inside it voids its ticket. */
  private onEdit(event: vscode.TextDocumentChangeEvent): void {
    for (const t of this.tracked.values()) {
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
      if (touched && t.status === 'pending') void this.voidTicket(t);
      if (touched && (t.status === 'pending' || t.status === 'stale')) this.scheduleRecheck(t);
    }
    this.lensesChanged.fire();
  }

  private async voidTicket(t: Tracked): Promise<void> {
    t.status = 'stale';
    t.decidedHere = true;
    this.refresh();
    try {
      // Voided by the system, not rejected by the person: the history says so.
      await coreServices().decideTicket(await this.ticketStore(), t.ticketId, { approve: false, by: 'pg-agent', comment: 'voided: the SQL was edited after its impact was measured' });
    } catch (error) {
      this.logger.warn('could not void an edited ticket', { ticket: t.ticketId, error: String(error) });
    }
    this.tellOwnerRejected(t);
  }

  private scheduleRecheck(t: Tracked): void {
    clearTimeout(this.rechecks.get(t.ticketId));
    this.rechecks.set(
      t.ticketId,
      setTimeout(() => {
        this.rechecks.delete(t.ticketId);
        if (this.tracked.get(t.ticketId)?.status === 'stale') void this.recheck(t.ticketId);
      }, RECHECK_DELAY_MS),
    );
  }

  /** The window's ticket store (files in .pgagent/approvals, or Redis), shared with ask runs. */
  ticketStore(): Promise<TicketStore> {
    const services = coreServices();
    this.store ??= services
      .openTicketStore({
        ...(redisUrl() ? { redisUrl: redisUrl() } : {}),
        approvalsDir: services.workspacePaths(this.workspaceDir ?? this.storageDir).approvals,
        logger: this.logger,
      })
      .then((store) => {
        // A ticket left EXECUTING by a crashed window or CLI is resolved from its database when it is read.
        store.setResolver(
          services.databaseResolver(async (connection) => {
            const { db, key } = await this.session.database();
            return key === connection ? db : undefined;
          }, this.logger),
        );
        return store;
      });
    // A failed open (Redis down) is reported now and retried next time.
    this.store.catch(() => {
      this.store = undefined;
    });
    return this.store;
  }

  private refresh(): void {
    this.lensesChanged.fire();
    this.changed.fire();
  }

  dispose(): void {
    for (const timer of this.rechecks.values()) clearTimeout(timer);
    for (const t of this.tracked.values()) t.watch.abort();
    for (const d of this.disposables.reverse()) d.dispose();
    void this.store?.then((s) => s.close()).catch(() => undefined);
    this.changed.dispose();
    this.lensesChanged.dispose();
  }
}

/**
 * Decisions on the writes the inline approval shows, made here or anywhere else: a person's click goes through
 * the one approval path (`decideTicket`, signed when a key exists), then the write runs once through the one
 * executor (`executeApproved`) — or through its owner (an ask run, a job), or, for an outside agent's proposal,
 * not here at all: the agent that proposed it runs it with execute_approved (README "Outside agents"), and this
 * window follows the ticket until it did. A decision made elsewhere (a terminal, a teammate's window) is watched
 * for and acted on the same way; an edit inside a statement voids its ticket.
 */
import * as vscode from 'vscode';
import { userInfo } from 'node:os';
import type { SigningKey } from '../../core/approvals/approvalPath';
import type { DecisionScope, Ticket } from '../../core/approvals/ticket';
import type { Logger } from '../../core/platform/logger';
import type { ApprovalView } from '../../shared/protocol';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreLoader } from '../lazyServices';
import { safetySettings } from '../settings/settings';
import { untrustedRefusal } from '../settings/workspaceTrust';
import type { ApprovalEntries, ApprovalEntry } from './approvalEntries';
import { notRunYet } from './approvalEntries';
import { followAgentRun } from './agentRunFollower';
import { approvalConfirmation } from './approvalTexts';
import { runsInThisWindow } from '../../core/approvals/executorRule';
import type { WindowTickets } from './windowTickets';

type Execution = Awaited<ReturnType<NonNullable<ApprovalEntry['owner']>['execute']>>;

export interface HeldWriteDecisionsDeps {
  core: CoreLoader;
  session: DatabaseSession;
  tickets: WindowTickets;
  entries: ApprovalEntries;
  logger: Logger;
  /** Where .pgagent/ lives (undo scripts, settings). */
  rootDir: string;
  openUndo(ticketId: string): Promise<void>;
}

export class HeldWriteDecisions {
  constructor(private readonly deps: HeldWriteDecisionsDeps) {}

  /** A person's decision (CodeLens, panel button or palette); HIGH and CRITICAL ask once more. */
  async decide(ticketId: string, approve: boolean): Promise<void> {
    const t = this.deps.entries.get(ticketId);
    if (!t || t.status !== 'pending') {
      void vscode.window.showWarningMessage(
        t?.status === 'stale'
          ? 'The SQL changed since this impact was measured; re-check it first.'
          : 'This approval is no longer pending.',
      );
      return;
    }
    const runsHere = runsInThisWindow(t);
    // HIGH and CRITICAL, and a statement holding hidden characters, ask once more in a modal that says why.
    const confirmation = approve ? approvalConfirmation(t.impact, t.sql, runsHere) : undefined;
    if (confirmation) {
      const confirm = await vscode.window.showWarningMessage(
        confirmation.message,
        { modal: true, detail: confirmation.detail },
        confirmation.button,
      );
      if (confirm !== confirmation.button) return;
    }
    const store = await this.deps.tickets.ticketStore();
    const services = this.deps.core();
    let key: SigningKey | undefined;
    try {
      key = await this.deps.tickets.signingKey();
    } catch (error) {
      // No passphrase, a wrong one, an unusable key: nothing was decided, the write stays pending here.
      const e = services.toAgentError(error);
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
      return;
    }
    t.decidedHere = true;
    let decided: Ticket;
    try {
      // The one approval path, on the SQL this window showed: a ticket for other SQL refuses the decision.
      // Signed mode: the signature also binds this database's identity and pinned policy version.
      const scope = key ? await this.signingScope(t.connection) : undefined;
      decided = await services.decideTicket(store, ticketId, {
        approve,
        ...(key ? { key } : { by: userInfo().username }),
        ...(scope ? { scope } : {}),
        // What this window showed: the SQL, and for a guard transaction its statements and effects too.
        seenHash: services.ticketHash({
          sql: t.sql,
          ...(t.transaction ? { origin: 'guardTransaction' as const, transaction: t.transaction } : {}),
        }),
        comment: approve ? 'approved in VS Code' : 'rejected in VS Code',
      });
    } catch (error) {
      this.fail(t, error);
      return;
    }
    if (!approve) {
      t.status = 'rejected';
      this.deps.entries.refresh();
      this.tellOwnerRejected(t);
    } else if (runsHere) await this.run(t);
    else {
      t.decisions = await this.decisionsView(decided);
      this.awaitAgent(t);
      void vscode.window.showInformationMessage(
        t.transaction
          ? `Approved. Nothing ran here: the client's retry commits it (${t.proposedBy ?? 'the client'} sends the same transaction through the guard; values may differ, within the approved rows per table).`
          : `Approved. Nothing ran here: it runs when ${t.proposedBy ?? 'the agent'} sends it again (execute_approved, or the same statement through the guard).`,
      );
    }
  }

  /** The database identity and pinned policy version, read from this window's database when it is the ticket's. */
  private async signingScope(connection: string): Promise<DecisionScope | undefined> {
    const { db, key } = await this.deps.session.database();
    if (key !== connection) return undefined;
    return db.withSession((session) => this.deps.core().decisionScope(session));
  }

  /**
   * Issue 25: a write that did not run because its lock was held by others (or the team's policy was not yet
   * met) is still approved: run it again; the executor re-checks everything as the first time.
   */
  async runAgain(ticketId: string): Promise<void> {
    const t = this.deps.entries.get(ticketId);
    if (!t || !notRunYet(t) || !runsInThisWindow(t)) {
      void vscode.window.showWarningMessage(
        'Only an approved write that did not run yet, and that this window runs, can be run again.',
      );
      return;
    }
    t.error = undefined;
    await this.run(t);
  }

  private tellOwnerRejected(t: ApprovalEntry): void {
    t.owner?.rejected().catch((error: unknown) =>
      this.deps.logger.warn('could not finish the ask run of a rejected write', {
        ticket: t.ticketId,
        error: String(error),
      }),
    );
  }

  /** Runs an approved ticket's exact SQL once, keeps its undo script, and says what happened. */
  private async run(t: ApprovalEntry): Promise<void> {
    t.status = 'running';
    this.deps.entries.refresh();
    try {
      const result = t.owner ? await t.owner.execute() : await this.execute(t);
      t.status = 'executed';
      t.executed = { at: new Date().toISOString(), rows: result.rows, undoFile: result.undoFile };
      this.deps.entries.refresh();
      const direct = result.tables
        .filter((x) => x.via === 'direct')
        .reduce((n, x) => n + x.inserted + x.updated + x.deleted, 0);
      const summary = `Executed: ${result.rows.toLocaleString('en-US')} rows changed in ${result.tables.length} table${result.tables.length === 1 ? '' : 's'} (${direct.toLocaleString('en-US')} by the statement itself).`;
      void vscode.window.showInformationMessage(summary, 'Open Undo Script').then((choice) => {
        if (choice) void this.deps.openUndo(t.ticketId);
      });
    } catch (error) {
      this.fail(t, error);
    }
  }

  private async execute(t: ApprovalEntry): Promise<Execution> {
    const services = this.deps.core();
    // Said before connecting; the executor checks it again when it claims the ticket (policySources.blocked).
    const untrusted = untrustedRefusal(this.deps.core);
    if (untrusted) throw untrusted;
    const { db, key } = await this.deps.session.database();
    const undoDir = services.workspacePaths(this.deps.rootDir).undo;
    // The ticket's own SQL runs (parsed from the ticket), never this window's copy of it.
    const result = await services.executeApproved(db, await this.deps.tickets.ticketStore(), t.ticketId, {
      ...(await safetySettings(this.deps.core, this.deps.rootDir)),
      connection: key,
      by: userInfo().username,
      undo: services.workspaceUndoSink(undoDir, t.ticketId),
      logger: this.deps.logger,
    });
    t.decisions = await this.decisionsView(result.ticket);
    if (result.outcomeNotRecorded !== undefined) {
      // Committed is committed: the lens says executed; the ticket is resolved from the database on its next read.
      void vscode.window.showWarningMessage(
        `The write committed, but recording that on ticket ${t.ticketId} failed: ${result.outcomeNotRecorded}`,
      );
    }
    return { rows: result.rows, tables: result.tables, undoFile: result.undoFile };
  }

  /** Who decided a ticket, each with whether their signature verifies (the card's "Approved by alice ✓ signed"). */
  private async decisionsView(ticket: Ticket): Promise<NonNullable<ApprovalView['decisions']>> {
    const approvers = (await safetySettings(this.deps.core, this.deps.rootDir)).approvalRules?.approvers ?? [];
    return ticket.decisions.map((d) => ({
      by: d.by,
      approve: d.approve,
      signed: this.deps.core().signatureState(ticket, d, approvers) === 'verified',
    }));
  }

  private fail(t: ApprovalEntry, error: unknown): void {
    const e = this.deps.core().toAgentError(error);
    t.status = 'failed';
    t.error = e.toInfo();
    this.deps.entries.refresh();
    void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
  }

  /** An agent's approved proposal: shown as approved until its ticket says the agent ran it (or it failed or expired). */
  awaitAgent(t: ApprovalEntry): void {
    t.status = 'approved';
    this.deps.entries.refresh();
    this.deps.logger.info('outside proposal approved; waiting for its agent to run it', {
      ticket: t.ticketId,
      by: t.proposedBy ?? '',
    });
    void followAgentRun(() => this.deps.tickets.ticketStore(), t.ticketId, t.watch.signal)
      .then((ticket) => {
        if (!this.deps.entries.isCurrent(t) || t.status !== 'approved') return;
        this.deps.logger.info('outside proposal settled', { ticket: t.ticketId, status: ticket.status });
        if (ticket.status === 'EXECUTED') t.status = 'executed';
        else {
          t.status = ticket.status === 'FAILED' ? 'failed' : 'rejected';
          t.error =
            ticket.status === 'FAILED'
              ? { code: 'DB_QUERY_FAILED', message: 'The agent ran it and it failed; it was rolled back.' }
              : { code: 'APPROVAL_EXPIRED', message: 'The ticket expired before the agent ran it.' };
        }
        this.deps.entries.refresh();
      })
      .catch((error: unknown) => {
        if (!t.watch.signal.aborted)
          this.deps.logger.warn("stopped following an agent's approved write", {
            ticket: t.ticketId,
            error: String(error),
          });
      });
  }

  /**
   * A teammate may decide from another window or machine (`pg-agent approvals approve`, shared Redis): their
   * approval runs the write here, as if approved in this window — except an outside agent's proposal, which its
   * agent runs; a rejection or expiry ends it.
   */
  watchForDecision(t: ApprovalEntry): void {
    void this.deps.tickets
      .ticketStore()
      .then((store) => store.waitForDecision(t.ticketId, t.watch.signal))
      .then(async (ticket) => {
        if (t.decidedHere || !this.deps.entries.isCurrent(t) || t.status !== 'pending') return;
        const last = ticket.history.at(-1);
        // Whether the decision carries a signature that verifies against approval.approvers: the person reading this can tell.
        const decision = ticket.decisions.at(-1);
        const rules = (await safetySettings(this.deps.core, this.deps.rootDir)).approvalRules;
        t.decisions = await this.decisionsView(ticket);
        const signed =
          decision && rules && this.deps.core().signatureState(ticket, decision, rules.approvers) === 'verified'
            ? ', signed ✓'
            : '';
        const who = last ? `${last.by}${signed}${last.comment ? ` (${last.comment})` : ''}` : 'someone';
        if (ticket.status === 'APPROVED' && !runsInThisWindow(t)) {
          void vscode.window.showInformationMessage(
            t.transaction
              ? `Approved by ${who}: the client's retry through the guard commits it; nothing runs here.`
              : `Approved by ${who}: ${t.proposedBy} runs it with execute_approved; nothing runs here.`,
          );
          this.awaitAgent(t);
        } else if (ticket.status === 'APPROVED') {
          void vscode.window.showInformationMessage(`Approved by ${who}: running it now.`);
          await this.run(t);
        } else {
          t.status = 'rejected';
          t.error = {
            code: ticket.status === 'EXPIRED' ? 'APPROVAL_EXPIRED' : 'APPROVAL_REJECTED',
            message:
              ticket.status === 'EXPIRED' ? 'The ticket expired before anyone approved it.' : `Rejected by ${who}.`,
          };
          this.deps.entries.refresh();
          this.tellOwnerRejected(t);
        }
      })
      .catch((error: unknown) => {
        if (!t.watch.signal.aborted)
          this.deps.logger.warn('stopped watching a ticket for decisions', {
            ticket: t.ticketId,
            error: String(error),
          });
      });
  }

  /** Voided by the system, not rejected by the person (the SQL was edited after its impact was measured). */
  async voidTicket(t: ApprovalEntry): Promise<void> {
    t.status = 'stale';
    t.decidedHere = true;
    this.deps.entries.refresh();
    try {
      await this.deps.core().decideTicket(await this.deps.tickets.ticketStore(), t.ticketId, {
        approve: false,
        by: 'pg-agent',
        comment: 'voided: the SQL was edited after its impact was measured',
      });
    } catch (error) {
      this.deps.logger.warn('could not void an edited ticket', { ticket: t.ticketId, error: String(error) });
    }
    this.tellOwnerRejected(t);
  }
}

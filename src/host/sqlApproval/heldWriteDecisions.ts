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
import type { DecisionRequest, SigningKey } from '../../core/approvals/approvalPath';
import type { DecisionScope, Ticket } from '../../core/approvals/ticket';
import type { Logger } from '../../core/platform/logger';
import type { ExecuteOptions } from '../../core/sql/approvedTicket';
import type { SafetySettings } from '../../core/sql/safetySettings';
import type { ApprovalView } from '../../shared/protocol';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';
import type { ApprovalEntries, ApprovalEntry, HeldWriteOwner } from './approvalEntries';
import { notRunYet } from './approvalEntries';
import { followAgentRun } from './agentRunFollower';
import { approvalConfirmation } from './approvalTexts';
import { runsInThisWindow } from '../../core/approvals/executorRule';
import type { WindowTickets } from './windowTickets';

type Execution = Awaited<ReturnType<HeldWriteOwner['execute']>>;

/** What deciding and running a held write needs from the core (built in host/compose/heldWriteDecisionsPort.ts). */
export interface HeldWriteDecisionsPort {
  /**
   * The settings in force, read ONCE per action (one read of each config file, host/settings/settings.ts) and
   * passed on to every part of it: the run, who signed, the claim's policy (`policySources.read`).
   */
  settings(): Promise<SafetySettings>;
  decideTicket: CoreServices['decideTicket'];
  ticketHash: CoreServices['ticketHash'];
  decisionScope: CoreServices['decisionScope'];
  /** The one executor (core/sql/executeApproved.ts). */
  executeApproved: CoreServices['executeApproved'];
  /** Where an executed write's undo script is kept (.pgagent/undo/). */
  undoSink(ticketId: string): NonNullable<ExecuteOptions['undo']>;
  signatureState: CoreServices['signatureState'];
  toAgentError: CoreServices['toAgentError'];
}

export interface HeldWriteDecisionsDeps {
  port: HeldWriteDecisionsPort;
  session: DatabaseSession;
  tickets: WindowTickets;
  entries: ApprovalEntries;
  logger: Logger;
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
    const port = this.deps.port;
    let key: SigningKey | undefined;
    try {
      key = await this.deps.tickets.signingKey();
    } catch (error) {
      // No passphrase, a wrong one, an unusable key: nothing was decided, the write stays pending here.
      const e = port.toAgentError(error);
      void vscode.window.showErrorMessage(e.advice ? `${e.message} ${e.advice}` : e.message);
      return;
    }
    t.decidedHere = true;
    let request: DecisionRequest;
    try {
      // Signed mode: the signature also binds this database's identity and pinned policy version.
      const scope = key ? await this.signingScope(t.connection) : undefined;
      request = {
        approve,
        ...(key ? { key } : { by: userInfo().username }),
        ...(scope ? { scope } : {}),
        // What this window showed: the SQL, and for a guard transaction its statements and effects too.
        seenHash: port.ticketHash({
          sql: t.sql,
          ...(t.transaction ? { origin: 'guardTransaction' as const, transaction: t.transaction } : {}),
        }),
        comment: approve ? 'approved in VS Code' : 'rejected in VS Code',
      };
    } catch (error) {
      this.fail(t, error);
      return;
    }
    // A job's write: the job decides and goes on with it, on the one path of a job's write (JobRunner.decideWrite).
    if (t.owner?.decide) return this.ownerDecides(t, t.owner, request);
    let decided: Ticket;
    try {
      // The one approval path, on the SQL this window showed: a ticket for other SQL refuses the decision.
      decided = await port.decideTicket(await this.deps.tickets.ticketStore(), ticketId, request);
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
      t.decisions = this.decisionsView(decided, await port.settings());
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
    return db.withSession((session) => this.deps.port.decisionScope(session));
  }

  /**
   * The owner takes the decision and goes on with the write (a job: `JobRunner.decideWrite` records it and runs
   * the approved write, or goes on without it). When it could not take it (a step of the job in flight, another
   * driver, no model) and the ticket is still pending, nothing was decided: the write waits for a decision again.
   */
  private async ownerDecides(t: ApprovalEntry, owner: HeldWriteOwner, request: DecisionRequest): Promise<void> {
    t.status = 'running';
    this.deps.entries.refresh();
    let result: Awaited<ReturnType<NonNullable<HeldWriteOwner['decide']>>> | undefined;
    let failure: unknown;
    try {
      result = await owner.decide?.(request);
    } catch (error) {
      failure = error;
    }
    if (result === 'rejected') {
      t.status = 'rejected';
      this.deps.entries.refresh();
    } else if (result !== undefined && result !== 'not taken') this.executed(t, result);
    else if ((await (await this.deps.tickets.ticketStore()).get(t.ticketId))?.status === 'PENDING_APPROVAL') {
      t.status = 'pending';
      t.decidedHere = false;
      this.deps.entries.refresh();
      const why =
        failure === undefined
          ? 'a step of the job is running, or no model is configured'
          : this.deps.port.toAgentError(failure).message;
      void vscode.window.showWarningMessage(`Nothing was decided (${why}); decide again when the job is free.`);
    } else
      this.fail(t, failure ?? new Error('The job stopped before it reported the write; Continue the job to go on.'));
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

  /**
   * Runs an approved ticket's exact SQL once, keeps its undo script, and says what happened. `settings`: as this
   * action already read them (a decision made elsewhere reads them once for its whole handling).
   */
  private async run(t: ApprovalEntry, settings?: SafetySettings): Promise<void> {
    t.status = 'running';
    this.deps.entries.refresh();
    try {
      this.executed(
        t,
        t.owner ? await t.owner.execute() : await this.execute(t, settings ?? (await this.deps.port.settings())),
      );
    } catch (error) {
      this.fail(t, error);
    }
  }

  /** What the run did, on the lens and card and in a notification. */
  private executed(t: ApprovalEntry, result: Execution): void {
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
  }

  /** The one executor, with the settings this action read (its claim reads no config file again). */
  private async execute(t: ApprovalEntry, settings: SafetySettings): Promise<Execution> {
    const port = this.deps.port;
    // Said before connecting; the executor checks it again when it claims the ticket (policySources.blocked).
    const untrusted = settings.policySources?.blocked?.();
    if (untrusted) throw untrusted;
    const { db, key } = await this.deps.session.database();
    // The ticket's own SQL runs (parsed from the ticket), never this window's copy of it.
    const result = await port.executeApproved(db, await this.deps.tickets.ticketStore(), t.ticketId, {
      ...settings,
      connection: key,
      by: userInfo().username,
      undo: port.undoSink(t.ticketId),
      logger: this.deps.logger,
    });
    t.decisions = this.decisionsView(result.ticket, settings);
    if (result.outcomeNotRecorded !== undefined) {
      // Committed is committed: the lens says executed; the ticket is resolved from the database on its next read.
      void vscode.window.showWarningMessage(
        `The write committed, but recording that on ticket ${t.ticketId} failed: ${result.outcomeNotRecorded}`,
      );
    }
    return { rows: result.rows, tables: result.tables, undoFile: result.undoFile };
  }

  /** Who decided a ticket, each with whether their signature verifies (the card's "Approved by alice ✓ signed"). */
  private decisionsView(ticket: Ticket, settings: SafetySettings): NonNullable<ApprovalView['decisions']> {
    const approvers = settings.approvalRules?.approvers ?? [];
    return ticket.decisions.map((d) => ({
      by: d.by,
      approve: d.approve,
      signed: this.deps.port.signatureState(ticket, d, approvers) === 'verified',
    }));
  }

  private fail(t: ApprovalEntry, error: unknown): void {
    const e = this.deps.port.toAgentError(error);
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
        // The settings of this whole handling, read once: who signed, and the run with its claim.
        const settings = await this.deps.port.settings();
        const rules = settings.approvalRules;
        t.decisions = this.decisionsView(ticket, settings);
        const signed =
          decision && rules && this.deps.port.signatureState(ticket, decision, rules.approvers) === 'verified'
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
          await this.run(t, settings);
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
      await this.deps.port.decideTicket(await this.deps.tickets.ticketStore(), t.ticketId, {
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

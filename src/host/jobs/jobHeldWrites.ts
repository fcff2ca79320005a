/**
 * A job's write at the inline approval (sqlApproval/), exactly like an ask run's: the job's `sql/NNN-*.sql`
 * (the SQL and a newline) opens with the CodeLens; approving hands the ticket back to the job, which runs
 * it (resumeFromTicket) and goes on; rejecting lets the job go on without it. After a window reload the
 * jobs held at a write get their lens and card back, and nothing runs until a person decides.
 */
import * as vscode from 'vscode';
import { join } from 'node:path';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { JobRunner } from '../../core/jobs/jobRunner';
import type { Logger } from '../../core/platform/logger';
import { isFinalStatus } from '../../shared/jobActions';
import type { JobBusyView } from '../../shared/protocol';
import { resolveJobFile } from './cockpit/jobFiles';
import type { JobRunners } from './jobRunners';
import type { CoreLoader } from '../lazyServices';
import type { HeldWriteOwner } from '../sqlApproval/approvalEntries';
import type { InlineApproval } from '../sqlApproval/inlineApproval';
import type { WindowTickets } from '../sqlApproval/windowTickets';

type Execution = Awaited<ReturnType<HeldWriteOwner['execute']>>;

/** What the held writes need from the job controller. */
export interface HeldWriteHooks {
  /** Runs a step of the job with progress (JobSteps.run); undefined when it did not run. */
  run(
    jobId: string,
    action: JobBusyView['action'],
    message: string,
    step: (runner: JobRunner) => Promise<JobOutcome>,
  ): Promise<JobOutcome | undefined>;
  /** Where a step ended (another write, the end, an error) shown to the person. */
  ended(outcome: JobOutcome): Promise<void>;
  fail(jobId: string, error: unknown, notify: boolean): void;
  /** The job is completed, failed or cancelled, as last read. */
  isFinal(jobId: string): boolean;
  changed(): void;
}

export interface JobHeldWritesDeps {
  core: CoreLoader;
  tickets: WindowTickets;
  approval: InlineApproval;
  runners: JobRunners;
  logger: Logger;
  hooks: HeldWriteHooks;
}

export class JobHeldWrites {
  /** The job of each write handed over (for the navigator: a job's write opens its cockpit). */
  private readonly jobOf = new Map<string, string>();

  constructor(private readonly deps: JobHeldWritesDeps) {}

  jobOfTicket(ticketId: string): string | undefined {
    return this.jobOf.get(ticketId);
  }

  /** The inline approval's card of a ticket, or null when the inline approval does not track it. */
  card(ticketId: string): ReturnType<InlineApproval['view']>['approvals'][number] | null {
    return this.deps.approval.view().approvals.find((a) => a.ticketId === ticketId) ?? null;
  }

  /** Hands a job's held write to the inline approval (once per ticket); `open` shows it in an editor. */
  async handOver(outcome: JobOutcome, open: boolean): Promise<void> {
    const { job, stop } = outcome;
    if (stop.kind !== 'approval') return;
    const check = await resolveJobFile(this.deps.runners.store().jobDir(job.id), stop.sqlFile);
    if (!check.ok)
      throw new (this.deps.core().AgentError)(
        'INTERNAL',
        `The job's SQL file ${stop.sqlFile} cannot be opened: ${check.reason}.`,
        'Continue the job to have the write prepared again.',
      );
    const uri = vscode.Uri.file(check.path);
    this.jobOf.set(stop.ticketId, job.id);
    const owner: HeldWriteOwner = {
      execute: () => this.execute(job.id, stop.ticketId),
      rejected: () => this.rejected(job.id),
    };
    this.deps.approval.track({
      ticketId: stop.ticketId,
      uri,
      start: 0,
      end: stop.sql.length,
      sql: stop.sql,
      connection: job.connection,
      impact: stop.impact,
      owner,
    });
    this.deps.logger.info('job write held for approval', {
      jobId: job.id,
      ticket: stop.ticketId,
      risk: stop.impact.risk,
      todo: stop.todoId ?? undefined,
    });
    if (open) {
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { preview: false });
    }
    this.deps.hooks.changed();
  }

  /** Gives a job held at a still-pending write its lens back (a window reload); true when it did. */
  async restore(outcome: JobOutcome): Promise<boolean> {
    const stop = outcome.stop;
    if (stop.kind !== 'approval' || this.card(stop.ticketId) !== null) return false;
    const ticket = await (await this.deps.tickets.ticketStore()).get(stop.ticketId);
    if (ticket?.status !== 'PENDING_APPROVAL') return false;
    this.deps.logger.info('restoring a job held at a write', { jobId: outcome.job.id, ticket: ticket.id });
    await this.handOver(outcome, false);
    return true;
  }

  /** Every job of the workspace held at a pending write gets its lens back. */
  async restoreAll(): Promise<void> {
    const viewer = await this.deps.runners.viewer();
    for (const job of await this.deps.runners.store().list()) {
      if (isFinalStatus(job.status) || job.status === 'pending_review') continue;
      const outcome = await viewer.outcome(job.id).catch((error: unknown) => {
        this.deps.logger.warn('a job could not be read back; its held write (if any) is not restored', {
          jobId: job.id,
          error: error instanceof Error ? error.message : String(error),
        });
        return undefined;
      });
      if (outcome) await this.restore(outcome);
    }
  }

  /** The approved write, run by the job; what it did goes back to the inline approval's lens and card. */
  private async execute(jobId: string, ticketId: string): Promise<Execution> {
    let outcome: JobOutcome | undefined;
    try {
      outcome = await this.deps.hooks.run(jobId, 'write', 'Running the approved write…', (runner) =>
        runner.resumeFromTicket(jobId),
      );
    } catch (error) {
      // The inline approval shows the failure on the lens and in a notification.
      this.deps.hooks.fail(jobId, error, false);
      throw error;
    }
    const execution = outcome?.execution;
    // Others held its locks (issue 25): nothing ran, the ticket is still approved; the lens says who is in the way.
    if (outcome?.stop.kind === 'approval' && outcome.stop.ticketId === ticketId && outcome.stop.lockWait) {
      throw new (this.deps.core().AgentError)(
        'LOCK_UNAVAILABLE',
        outcome.stop.lockWait,
        'The ticket is still approved: Continue the job when they are done to run it.',
      );
    }
    if (!outcome || !execution || execution.ticketId !== ticketId) {
      const why = outcome ? `it stopped at "${outcome.stop.kind}"` : 'the step did not run';
      throw new (this.deps.core().AgentError)(
        'APPROVAL_NOT_APPROVED',
        `The job did not report running the write (${why}).`,
        'See the job in the panel; Continue goes on from where it stopped.',
      );
    }
    // The job went on after the write: its next stop may be another write, or the end.
    void this.deps.hooks.ended(outcome);
    return {
      rows: execution.rows,
      tables: execution.tables,
      undoFile: join(this.deps.runners.store().jobDir(jobId), execution.undoFile),
    };
  }

  /** Rejected (here, by a teammate, or voided by an edit): the job goes on without the write. */
  private async rejected(jobId: string): Promise<void> {
    if (this.deps.hooks.isFinal(jobId)) return;
    try {
      const outcome = await this.deps.hooks.run(jobId, 'write', 'Going on without the rejected write…', (runner) =>
        runner.resumeFromTicket(jobId),
      );
      if (outcome) await this.deps.hooks.ended(outcome);
    } catch (error) {
      this.deps.hooks.fail(jobId, error, true);
    }
  }
}

/**
 * A job's write at the inline approval (sqlApproval/), exactly like an ask run's: the job's `sql/NNN-*.sql`
 * (the SQL and a newline) opens with the CodeLens; a decision here is the job's own (`JobRunner.decideWrite`, the
 * path `pg-agent job` takes too): approved, the job runs it and goes on; rejected, it goes on without it. One
 * decided elsewhere resumes it as its ticket says (`resumeFromTicket`). After a window reload the
 * jobs held at a write get their lens and card back, and nothing runs until a person decides.
 */
import * as vscode from 'vscode';
import { join } from 'node:path';
import type { DecisionRequest } from '../../core/approvals/approvalPath';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { JobRunner } from '../../core/jobs/jobRunner';
import type { AgentError } from '../../core/platform/errors';
import type { Logger } from '../../core/platform/logger';
import type { ErrorCode } from '../../shared/errorCodes';
import { isFinalStatus } from '../../shared/jobActions';
import type { JobBusyView } from '../../shared/protocol';
import { resolveJobFile } from './cockpit/jobFiles';
import type { JobRunners } from './jobRunners';
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
  /** An error of the core's kind (AgentError), as the inline approval shows it. */
  error(code: ErrorCode, message: string, advice: string): AgentError;
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
      throw this.deps.error(
        'INTERNAL',
        `The job's SQL file ${stop.sqlFile} cannot be opened: ${check.reason}.`,
        'Continue the job to have the write prepared again.',
      );
    const uri = vscode.Uri.file(check.path);
    this.jobOf.set(stop.ticketId, job.id);
    const owner: HeldWriteOwner = {
      decide: (decision) => this.decide(job.id, stop.ticketId, decision),
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

  /**
   * A person's decision in this window: the job records it and goes on — the approved write run by the job, or
   * the job without it — on the one path of a job's write, `JobRunner.decideWrite` (the CLI's too).
   */
  private async decide(
    jobId: string,
    ticketId: string,
    decision: DecisionRequest,
  ): Promise<Execution | 'rejected' | 'not taken'> {
    const outcome = await this.step(
      jobId,
      decision.approve ? 'Running the approved write…' : 'Going on without the rejected write…',
      (runner) => runner.decideWrite(jobId, decision),
    );
    if (!outcome) return 'not taken';
    if (decision.approve) return this.executionOf(jobId, ticketId, outcome);
    void this.deps.hooks.ended(outcome);
    return 'rejected';
  }

  /** A step of the job on its write; a failure is the job's too (the inline approval shows it on the lens). */
  private async step(
    jobId: string,
    message: string,
    step: (runner: JobRunner) => Promise<JobOutcome>,
  ): Promise<JobOutcome | undefined> {
    try {
      return await this.deps.hooks.run(jobId, 'write', message, step);
    } catch (error) {
      this.deps.hooks.fail(jobId, error, false);
      throw error;
    }
  }

  /** The write approved elsewhere (a terminal, a teammate), run by the job as its ticket says. */
  private async execute(jobId: string, ticketId: string): Promise<Execution> {
    const outcome = await this.step(jobId, 'Running the approved write…', (runner) => runner.resumeFromTicket(jobId));
    return this.executionOf(jobId, ticketId, outcome);
  }

  /** What the job's step did with the approved write, for the inline approval's lens and card. */
  private executionOf(jobId: string, ticketId: string, outcome: JobOutcome | undefined): Execution {
    const execution = outcome?.execution;
    // Others held its locks (issue 25): nothing ran, the ticket is still approved; the lens says who is in the way.
    if (outcome?.stop.kind === 'approval' && outcome.stop.ticketId === ticketId && outcome.stop.lockWait) {
      throw this.deps.error(
        'LOCK_UNAVAILABLE',
        outcome.stop.lockWait,
        'The ticket is still approved: Continue the job when they are done to run it.',
      );
    }
    if (!outcome || !execution || execution.ticketId !== ticketId) {
      const why = outcome ? `it stopped at "${outcome.stop.kind}"` : 'the step did not run';
      throw this.deps.error(
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

  /** Rejected by a teammate, voided by an edit, or expired: the job goes on without the write. */
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

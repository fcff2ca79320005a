/**
 * What the person is told about jobs in VS Code: where a step ended (a held write goes to the inline
 * approval; a review, the end or a failure gets a notification with Open), a failed action (kept in the
 * panel too), and the ports the host-pure steps take: the progress notification and the configured model.
 */
import * as vscode from 'vscode';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { Logger } from '../../core/platform/logger';
import type { ErrorInfo } from '../../shared/errorCodes';
import type { JobBusyView } from '../../shared/protocol';
import type { CoreServices } from '../lazyServices';
import type { ModelProviderPort } from '../settings/modelProvider';
import { configuredEmbedder, configuredProvider, withSignal } from '../settings/modelProvider';
import type { JobLocalState } from './cockpit/jobView';
import type { JobStepModel, JobStepUi } from './jobSteps';

/** VS Code's cancellable progress notification, for the jobs' steps. */
export const PROGRESS_UI: JobStepUi = {
  progress: (title, work) =>
    Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        (progress, token) =>
          work(
            (message) => progress.report({ message }),
            (cancel) => token.onCancellationRequested(cancel),
          ),
      ),
    ),
  info: (message) => void vscode.window.showInformationMessage(message),
};

/** The configured model for a job's step (the person is told when none is), its calls stopped by the step's Cancel. */
export function stepModel(port: ModelProviderPort): JobStepModel {
  return async (signal) => {
    const provider = await configuredProvider(port, 'A job');
    if (!provider) return undefined;
    const embedder = await configuredEmbedder(port);
    return { provider: withSignal(provider, signal), ...(embedder ? { embedder } : {}) };
  };
}

/** The core's error reading, loaded when called (host/compose/jobsPort.ts). */
export type JobNoticesPort = Pick<CoreServices, 'toAgentError'>;

export interface JobNoticesDeps {
  logger: Logger;
  port: JobNoticesPort;
  /** Whether the job's cockpit is the editor the person is looking at (no notification needed then). */
  isShown(jobId: string): boolean;
  /** Opens (or reveals) the job's cockpit. */
  open(jobId: string): Promise<void>;
  setLocal(jobId: string, change: Partial<JobLocalState>): void;
  /** A held write to the inline approval (JobHeldWrites.handOver). */
  handOver(outcome: JobOutcome, open: boolean): Promise<void>;
}

export class JobNotices {
  constructor(private readonly deps: JobNoticesDeps) {}

  /** Where a step ended: a held write goes to the inline approval; a finished job says so. */
  async afterStep(outcome: JobOutcome, open: boolean): Promise<void> {
    const { job, stop } = outcome;
    switch (stop.kind) {
      case 'approval':
        await this.deps.handOver(outcome, open);
        return;
      case 'completed':
        this.notify('info', `Job "${job.title}" completed. ${stop.summary}`.trim(), job.id);
        return;
      case 'failed':
        this.deps.setLocal(job.id, { error: stop.error });
        this.notify(
          'error',
          `Job "${job.title}" failed: ${stop.error.message}${stop.error.advice ? ` ${stop.error.advice}` : ''}`,
          job.id,
          true,
        );
        return;
      case 'interrupted':
        // A failed step: the job stays where it was, the error goes to the panel and a notification.
        if (stop.error) this.report(job.id, 'continue', stop.error);
        return;
      case 'frozen':
        void vscode.window.showInformationMessage(`Job "${job.title}" paused. Continue picks it up where it stopped.`);
        return;
      case 'review':
        this.notify('info', `Job "${job.title}": plan ready for review (cycle ${stop.cycle}).`, job.id);
        return;
      case 'cancelled':
        return;
    }
  }

  /** A failed action: logged, kept in the panel, and (unless `notify` is false) a notification with Show Job. */
  report(jobId: string | undefined, action: JobBusyView['action'], error: unknown, notify = true): void {
    const info = isErrorInfo(error) ? error : this.deps.port.toAgentError(error).toInfo();
    this.deps.logger.error('job action failed', { jobId, action, code: info.code, error: info.message });
    if (jobId !== undefined) this.deps.setLocal(jobId, { error: info });
    if (notify && info.code === 'JOB_BUSY') {
      // Another window, a CLI or a teammate drives the job: nothing failed here; watch it move in the panel.
      void vscode.window.showWarningMessage(info.message, 'Watch').then((choice) => {
        if (choice && jobId !== undefined) void this.deps.open(jobId);
      });
    } else if (notify) {
      void vscode.window
        .showErrorMessage(`${info.message}${info.advice ? ` ${info.advice}` : ''}`, 'Show Job')
        .then((choice) => {
          if (choice && jobId !== undefined) void this.deps.open(jobId);
        });
    }
  }

  /** A notification with Open (the job's cockpit), unless the person is looking at that cockpit already. */
  private notify(severity: 'info' | 'error', message: string, jobId: string, always = false): void {
    if (!always && this.deps.isShown(jobId)) return;
    const shown =
      severity === 'error'
        ? vscode.window.showErrorMessage(message, 'Open')
        : vscode.window.showInformationMessage(message, 'Open');
    void shown.then((choice) => {
      if (choice === 'Open') void this.deps.open(jobId);
    });
  }
}

function isErrorInfo(value: unknown): value is ErrorInfo {
  return (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Error) &&
    typeof (value as ErrorInfo).code === 'string' &&
    typeof (value as ErrorInfo).message === 'string'
  );
}

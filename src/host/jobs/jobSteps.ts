/**
 * One step of a job at a time per job (plan, revise, approve, continue, cancel), run under a cancellable
 * progress notification: its Cancel stops the model call in flight and the job stays resumable.
 */
import * as vscode from 'vscode';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { JobRunner } from '../../core/jobs/jobRunner';
import type { Logger } from '../../core/platform/logger';
import type { JobBusyView } from '../../shared/protocol';
import type { JobRunners } from './jobRunners';
import type { JobLocalState } from './jobView';
import { configuredEmbedder, configuredProvider } from '../settings/modelProvider';

export type Step = (runner: JobRunner) => Promise<JobOutcome>;

export interface JobStepsDeps {
  runners: JobRunners;
  logger: Logger;
  geminiKey(): Promise<string | undefined>;
  /** This window's state of a job changed (busy, error). */
  setLocal(jobId: string, change: Partial<JobLocalState>): void;
  /** The step wrote files: re-read them soon. */
  filesChanged(): void;
  /** The step ended, however: re-read the job now. */
  ended(): Promise<void>;
}

interface Running {
  abort: AbortController;
  done: Promise<unknown>;
}

export class JobSteps {
  private readonly running = new Map<string, Running>();

  constructor(private readonly deps: JobStepsDeps) {}

  isRunning(jobId: string): boolean {
    return this.running.has(jobId);
  }

  /** A job with a step in flight (for the status bar), if any. */
  anyRunning(): string | undefined {
    return [...this.running.keys()][0];
  }

  /** Stops the step in flight of `jobId`, if any, and waits for it to end. */
  async stop(jobId: string): Promise<void> {
    const inFlight = this.running.get(jobId);
    if (!inFlight) return;
    inFlight.abort.abort();
    await inFlight.done.catch(() => undefined);
  }

  /** Resolves undefined when the step was not started (one in flight, no model) or was cancelled. */
  async run(jobId: string, action: JobBusyView['action'], message: string, step: Step, needsModel: boolean): Promise<JobOutcome | undefined> {
    if (this.running.has(jobId)) {
      void vscode.window.showInformationMessage('This job is already working on something; wait for it or cancel the job.');
      return undefined;
    }
    // Claimed before the first await: a second quick click finds the step already running.
    const abort = new AbortController();
    const slot: Running = { abort, done: Promise.resolve() };
    this.running.set(jobId, slot);
    let started = false;
    try {
      const provider = needsModel ? await configuredProvider(this.deps, 'A job') : undefined;
      if (needsModel && !provider) return undefined;
      const embedder = provider ? await configuredEmbedder(this.deps) : undefined;
      const job = await this.deps.runners.store().get(jobId);
      const work = Promise.resolve(vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Job: ${job.title}`, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          progress.report({ message });
          return this.deps.runners.withAction(job.connection, {
            provider,
            ...(embedder ? { embedder } : {}),
            signal: abort.signal,
            onEvent: (event) => {
              if (event.type === 'step') {
                progress.report({ message: event.message });
                this.deps.setLocal(jobId, { busy: { action, message: event.message } });
                this.deps.logger.debug('job step', { jobId, phase: event.phase, step: event.message });
              } else {
                this.deps.filesChanged();
              }
            },
          }, step);
        },
      ));
      slot.done = work;
      started = true;
      this.deps.setLocal(jobId, { busy: { action, message }, error: null });
      this.deps.logger.info('job step started', { jobId, action });
      const outcome = await work;
      if (outcome.stop.kind === 'interrupted' && abort.signal.aborted) {
        // The person's Cancel: nothing failed, the job waits for Continue.
        this.deps.logger.info('job step cancelled by the person', { jobId, action });
        return { ...outcome, stop: { kind: 'interrupted' } };
      }
      this.deps.logger.info('job stopped', { jobId, action, status: outcome.job.status, stop: outcome.stop.kind });
      return outcome;
    } catch (error) {
      if (abort.signal.aborted) {
        this.deps.logger.info('job step cancelled by the person', { jobId, action });
        return undefined;
      }
      throw error;
    } finally {
      this.running.delete(jobId);
      if (started) {
        this.deps.setLocal(jobId, { busy: null });
        await this.deps.ended();
      }
    }
  }

  dispose(): void {
    for (const r of this.running.values()) r.abort.abort();
  }
}

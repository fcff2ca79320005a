/**
 * One step of a job at a time per job (plan, revise, approve, continue, cancel), run under a cancellable
 * progress notification: its Cancel stops the model call in flight and the job stays resumable.
 * Host-pure: the notification and the configured model come in as ports (JobStepUi, JobStepModel).
 */
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { JobRunner } from '../../core/jobs/jobRunner';
import type { Embedder } from '../../core/llm/embeddings';
import type { LlmProvider } from '../../core/llm/provider';
import type { Logger } from '../../core/platform/logger';
import type { JobBusyView } from '../../shared/protocol';
import type { JobRunners } from './jobRunners';
import type { JobLocalState } from './cockpit/jobView';

export type Step = (runner: JobRunner) => Promise<JobOutcome>;

/** The window's progress notification and messages (VS Code's withProgress in the extension). */
export interface JobStepUi {
  /** Runs `work` under a cancellable progress titled `title`; `report` updates its message, `onCancel` is the person's Cancel. */
  progress<T>(
    title: string,
    work: (report: (message: string) => void, onCancel: (cancel: () => void) => void) => Promise<T>,
  ): Promise<T>;
  info(message: string): void;
}

/** The configured model for a step, its calls bound to `signal`; undefined when none is configured (the person was told). */
export type JobStepModel = (signal: AbortSignal) => Promise<{ provider: LlmProvider; embedder?: Embedder } | undefined>;

export interface JobStepsDeps {
  runners: JobRunners;
  logger: Logger;
  ui: JobStepUi;
  model: JobStepModel;
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

  /** Resolves when no step of `jobId` is in flight (at once when none is). */
  async idle(jobId: string): Promise<void> {
    for (let inFlight = this.running.get(jobId); inFlight; inFlight = this.running.get(jobId))
      await inFlight.done.catch(() => undefined);
  }

  /** Stops the step in flight of `jobId`, if any, and waits for it to end. */
  async stop(jobId: string): Promise<void> {
    const inFlight = this.running.get(jobId);
    if (!inFlight) return;
    inFlight.abort.abort();
    await inFlight.done.catch(() => undefined);
  }

  /** Resolves undefined when the step was not started (one in flight, no model) or was cancelled. */
  async run(
    jobId: string,
    action: JobBusyView['action'],
    message: string,
    step: Step,
    needsModel: boolean,
  ): Promise<JobOutcome | undefined> {
    if (this.running.has(jobId)) {
      this.deps.ui.info('This job is already working on something; wait for it or cancel the job.');
      return undefined;
    }
    // Claimed before the first await: a second quick click finds the step already running.
    const abort = new AbortController();
    let finished: () => void = () => undefined;
    const slot: Running = { abort, done: new Promise<void>((resolve) => (finished = resolve)) };
    this.running.set(jobId, slot);
    let started = false;
    try {
      const model = needsModel ? await this.deps.model(abort.signal) : undefined;
      if (needsModel && !model) return undefined;
      const job = await this.deps.runners.store().get(jobId);
      const work = this.deps.ui.progress(`Job: ${job.title}`, (report, onCancel) => {
        onCancel(() => abort.abort());
        report(message);
        return this.deps.runners.withAction(
          job.connection,
          {
            provider: model?.provider,
            ...(model?.embedder ? { embedder: model.embedder } : {}),
            signal: abort.signal,
            onEvent: (event) => {
              if (event.type === 'step') {
                report(event.message);
                this.deps.setLocal(jobId, { busy: { action, message: event.message } });
                this.deps.logger.debug('job step', { jobId, phase: event.phase, step: event.message });
              } else {
                this.deps.filesChanged();
              }
            },
          },
          step,
        );
      });
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
      finished();
    }
  }

  dispose(): void {
    for (const r of this.running.values()) r.abort.abort();
  }
}

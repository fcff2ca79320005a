/**
 * Jobs in VS Code (issue #5, UX.md side panel): the job list and the selected job's view for the panel,
 * and every person's action on a job (start, review, continue, cancel) run through the core's JobRunner
 * under a cancellable progress. Held writes go to the inline approval (jobHeldWrites.ts); the review
 * chat streams into the same state (jobChat.ts).
 */
import * as vscode from 'vscode';
import type { Ticket } from '../../core/approvals/ticket';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { StopDecision } from '../../core/jobs/jobRunner';
import { jobActions } from '../../shared/jobActions';
import type { JobActionName } from '../../shared/jobActions';
import { assertNever } from '../../shared/protocol';
import type { JobBusyView, JobListItem, JobView } from '../../shared/protocol';
import type { JobIntent } from '../../shared/panelMessages';
import type { CockpitState } from '../../shared/cockpitProtocol';
import { configuredProvider } from '../settings/modelProvider';
import { throttle } from '../../shared/throttle';
import { resolveJobFile } from './cockpit/jobFiles';
import type { JobChat } from './jobChat';
import type { JobsPanelState } from './jobBoard';
import type { JobBoard } from './jobBoard';
import type { JobHeldWrites } from './jobHeldWrites';
import type { JobNotices } from './jobNotices';
import type { JobPlanWatch } from './jobPlanWatch';
import type { JobRunners } from './jobRunners';
import { actor } from './jobRunners';
import type { Step } from './jobSteps';
import type { JobSteps } from './jobSteps';
import { buildJobParts } from './jobParts';
import type { JobControllerDeps } from './jobParts';
import type { PlanDecisionKind } from './planDecisions';
import { decidePlanHere, resumeDecidedElsewhere } from './planDecisions';

const RELOAD_INTERVAL_MS = 250;

export class JobController implements vscode.Disposable {
  /** The window's job runner (one per window, rebuilt when its settings change); collab's Execute as job uses it too. */
  readonly runners: JobRunners;
  private readonly board: JobBoard;
  private readonly steps: JobSteps;
  private readonly writes: JobHeldWrites;
  private readonly chat: JobChat;
  private readonly planWatch: JobPlanWatch;
  private readonly notices: JobNotices;
  private readonly reload = throttle(() => void this.board.refresh(), RELOAD_INTERVAL_MS);
  private watcher: vscode.FileSystemWatcher | undefined;
  private readonly settingsEvents: vscode.Disposable[];
  private restored: Promise<void> | undefined;

  constructor(private readonly deps: JobControllerDeps) {
    const parts = buildJobParts(deps, {
      open: (jobId) => this.open(jobId),
      refresh: () => this.refresh(),
      reload: () => this.reload.request(),
      report: (jobId, action, error, notify) => this.report(jobId, action, error, notify),
      planDecided: (jobId, ticket) => this.planDecided(jobId, ticket),
    });
    ({
      runners: this.runners,
      board: this.board,
      steps: this.steps,
      writes: this.writes,
      chat: this.chat,
      planWatch: this.planWatch,
      notices: this.notices,
    } = parts);
    // VS Code's settings changed: the window's runner reads its settings again (.pgagent/config.json: panelShown's watcher).
    this.settingsEvents = [
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('postgresAgent')) this.settingsChanged();
      }),
    ];
  }

  state(): JobsPanelState {
    return this.board.state();
  }

  /** The job whose held write `ticketId` is, when this window knows it. */
  jobOfTicket(ticketId: string): string | undefined {
    return this.writes.jobOfTicket(ticketId) ?? this.board.jobAtWrite(ticketId);
  }

  /** One job's snapshot for its cockpit. */
  cockpitState(jobId: string): CockpitState {
    return this.board.cockpitState(jobId);
  }

  /** Selects the job and opens (or reveals) its cockpit: what every "open this job" does. */
  async open(jobId: string): Promise<void> {
    await this.board.select(jobId);
    await this.deps.showJob(jobId);
  }

  /** A cockpit opened on the job: keep its view read and current. */
  watch(jobId: string): Promise<void> {
    return this.board.watch(jobId);
  }

  /** Its cockpit closed. */
  unwatch(jobId: string): void {
    this.board.unwatch(jobId);
  }

  /** Jobs known to this window (for the palette's pickers). */
  list(): JobListItem[] {
    return this.board.list();
  }

  selected(): JobView | null {
    return this.board.selected();
  }

  refresh(): Promise<void> {
    return this.board.refresh();
  }

  select(jobId: string): Promise<void> {
    return this.board.select(jobId);
  }

  /**
   * Once per window, when the panel is first shown: read the jobs from their folders, follow their files,
   * and give jobs held at a write their CodeLens back (never running anything on their own).
   */
  panelShown(): Promise<void> {
    if (!this.watcher) {
      this.watcher = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(vscode.Uri.file(this.deps.rootDir), '.pgagent/{jobs/**,config.json}'),
      );
      // The history's own objects change with every commit, which also changes the job's files.
      const changed = (uri: vscode.Uri) => {
        if (uri.path.endsWith('/.pgagent/config.json')) this.settingsChanged();
        else if (!uri.path.includes('/.history/') && !uri.path.includes('/.index/')) this.reload.request();
      };
      this.watcher.onDidCreate(changed);
      this.watcher.onDidChange(changed);
      this.watcher.onDidDelete(changed);
    }
    return this.refresh();
  }

  /** A settings change event: the window's runner reads its settings on its next use, and the views are read again. */
  private settingsChanged(): void {
    this.runners.settingsChanged();
    this.reload.request();
  }

  /** After the database is open: jobs waiting at a write get their CodeLens and card again. */
  restoreHeld(): Promise<void> {
    this.restored ??= this.writes
      .restoreAll()
      .then(() => this.refresh())
      .catch((error: unknown) => {
        this.deps.logger.warn('could not restore jobs held at a write', { error: String(error) });
      });
    return this.restored;
  }

  // ---- actions ---------------------------------------------------------------------------------

  /** The panel's intents (parsed by the panel provider). */
  handle(intent: JobIntent): Promise<void> {
    switch (intent.type) {
      case 'selectJob':
        return this.select(intent.jobId);
      case 'approvePlan':
        return this.approvePlan(intent.jobId, intent.planHash);
      case 'requestChanges':
        return this.requestChanges(intent.jobId, intent.feedback.trim(), intent.planHash);
      case 'skipReview':
        return this.skipReview(intent.jobId, intent.planHash ?? undefined);
      case 'pauseJob':
        return this.pauseJob(intent.jobId);
      case 'cancelJob':
        return this.cancelJob(intent.jobId);
      case 'continueJob':
        return this.continueJob(intent.jobId);
      case 'sendChat':
        return this.chat.send(intent.jobId, intent.text.trim(), intent.debug);
      case 'applyPlanEdit':
        return this.chat.planEdit(intent.jobId, intent.editId, true);
      case 'discardPlanEdit':
        return this.chat.planEdit(intent.jobId, intent.editId, false);
      case 'openJobFile':
        return this.openJobFile(intent.jobId, intent.path);
      default:
        return assertNever(intent);
    }
  }

  /** Creates a job for `task`, selects it, and plans it to its first stop (normally the review). */
  async newJob(task: string): Promise<void> {
    const provider = await configuredProvider(this.deps.port, 'A job');
    if (!provider) return;
    let jobId: string;
    try {
      const job = await this.runners.withAction(
        undefined,
        { provider: undefined, signal: new AbortController().signal, onEvent: () => undefined },
        (runner) => runner.create({ task }),
      );
      jobId = job.id;
      this.deps.logger.info('job created', { jobId, title: job.title });
    } catch (error) {
      this.report(undefined, 'plan', error);
      return;
    }
    await this.open(jobId);
    await this.perform(jobId, 'plan', 'Planning…', (runner) => runner.continue(jobId));
  }

  /**
   * Decides the job's plan ticket (the one approval path) for the plan with `seenHash`, the plan the panel
   * showed; from the palette, the plan as it is now. A plan that changed since is refused as stale.
   */
  approvePlan(jobId: string, seenHash?: string): Promise<void> {
    return this.decidePlan('approvePlan', jobId, seenHash);
  }

  requestChanges(jobId: string, feedback: string, seenHash?: string): Promise<void> {
    return this.decidePlan('requestChanges', jobId, seenHash, feedback);
  }

  skipReview(jobId: string, seenHash?: string): Promise<void> {
    return this.decidePlan('skipReview', jobId, seenHash);
  }

  /** A decision at the plan review (planDecisions.ts): its own step resumes the job; the ticket's watch stands down. */
  private decidePlan(
    kind: PlanDecisionKind,
    jobId: string,
    seenHash: string | undefined,
    feedback?: string,
  ): Promise<void> {
    const stop = this.board.viewOf(jobId)?.stop;
    const ticketId = stop?.kind === 'review' ? (stop.ticketId ?? undefined) : undefined;
    return this.attempt(jobId, kind, kind, () =>
      decidePlanHere(
        { steps: this.steps, planWatch: this.planWatch, decider: () => this.decider() },
        { kind, jobId, ticketId, seenHash, ...(feedback !== undefined ? { feedback } : {}) },
      ),
    );
  }

  /** Goes on from where a job stopped: its checkpoint, or a write decided elsewhere. */
  continueJob(jobId: string): Promise<void> {
    // At a held write, continue goes on as the ticket was decided (resumeFromTicket).
    return this.perform(jobId, 'continue', 'Continuing…', (runner) => runner.continue(jobId), 'continueJob');
  }

  /**
   * Pauses the job (status frozen): a step in flight here or in another process (pg-agent job) stops at its
   * next step boundary, so the model call in flight is not wasted; Continue picks it up.
   */
  async pauseJob(jobId: string): Promise<void> {
    const view = this.board.viewOf(jobId);
    if (view && !jobActions(view).includes('pauseJob')) {
      void vscode.window.showWarningMessage(
        `Only a job that is planning or running can be paused (this one is ${view.status}).`,
      );
      return;
    }
    try {
      await (await this.runners.viewer()).freeze(jobId);
      this.deps.logger.info('job paused by the person', { jobId, running: this.steps.isRunning(jobId) });
      if (this.steps.isRunning(jobId))
        this.board.setLocal(jobId, { busy: { action: 'pause', message: 'Pausing after the current step…' } });
    } catch (error) {
      this.report(jobId, 'pause', error);
    }
    await this.refresh();
  }

  /** Cancels for good (after asking): a step in flight is stopped first; a held write is rejected by the core. */
  async cancelJob(jobId: string): Promise<void> {
    const title = this.board.job(jobId)?.title ?? jobId;
    const confirm = await vscode.window.showWarningMessage(
      `Cancel the job "${title}"?`,
      {
        modal: true,
        detail:
          'A cancelled job cannot be resumed. A write of the job waiting for approval is rejected; writes already run stay (each has its undo script).',
      },
      'Cancel Job',
    );
    if (confirm !== 'Cancel Job') return;
    await this.steps.stop(jobId);
    this.chat.stop(jobId);
    await this.perform(jobId, 'cancel', 'Cancelling…', (runner) => runner.cancel(jobId, actor()), undefined, false);
  }

  /** Opens a file of the job folder; the path from the panel is checked again on disk. */
  async openJobFile(jobId: string, path: string): Promise<void> {
    const check = await resolveJobFile(this.runners.store().jobDir(jobId), path);
    if (!check.ok) {
      this.deps.logger.warn('refused to open a job file', { jobId, path: path.slice(0, 120), reason: check.reason });
      void vscode.window.showWarningMessage(`Cannot open ${path.slice(0, 120)} of this job: ${check.reason}.`);
      return;
    }
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(check.path));
    await vscode.window.showTextDocument(document, { preview: false });
  }

  // ---- running steps ---------------------------------------------------------------------------

  /** Runs one step with progress; errors are shown (the job stays where it was) and kept in the panel. */
  private perform(
    jobId: string,
    action: JobBusyView['action'],
    message: string,
    step: Step,
    requires?: JobActionName,
    needsModel = true,
  ): Promise<void> {
    return this.attempt(jobId, action, requires, () => this.steps.run(jobId, action, message, step, needsModel));
  }

  /** `run` when the action applies to the job as shown; where it ended is shown, an error reported (and kept in the panel). */
  private async attempt(
    jobId: string,
    action: JobBusyView['action'],
    requires: JobActionName | undefined,
    run: () => Promise<JobOutcome | undefined>,
    quietWhenBusy = false,
  ): Promise<void> {
    const view = this.board.viewOf(jobId);
    if (requires && view && !jobActions(view).includes(requires)) {
      void vscode.window.showWarningMessage(
        `That does not apply to the job right now (${view.busy ? view.busy.message : view.status}).`,
      );
      return;
    }
    try {
      const outcome = await run();
      if (outcome) await this.notices.afterStep(outcome, true);
    } catch (error) {
      // Another driver (the window or CLI that decided) is on the job: nothing failed here.
      if (quietWhenBusy && this.deps.port.toAgentError(error).code === 'JOB_BUSY') {
        this.deps.logger.info('the job is driven elsewhere; this window only watches it', { jobId });
        return;
      }
      this.report(jobId, action, error);
    }
  }

  private report(jobId: string | undefined, action: JobBusyView['action'], error: unknown, notify = true): void {
    this.notices.report(jobId, action, error, notify);
  }

  /** The person at this window deciding (signing with the window's approval key, if any). */
  private async decider(): Promise<Omit<StopDecision, 'seenHash'>> {
    const key = await this.deps.tickets.signingKey();
    return key ? { key } : { by: actor() };
  }

  /** A plan ticket decided elsewhere (a terminal, a teammate): resumed once, by this one path (planDecisions.ts). */
  private async planDecided(jobId: string, ticket: Ticket): Promise<void> {
    this.deps.logger.info('plan ticket decided elsewhere', {
      jobId,
      ticket: ticket.id,
      status: ticket.status,
      by: ticket.decisions.at(-1)?.by,
    });
    await this.attempt(
      jobId,
      'continue',
      undefined,
      () => resumeDecidedElsewhere({ steps: this.steps, runners: this.runners }, jobId, ticket),
      true,
    );
  }

  dispose(): void {
    this.planWatch.dispose();
    this.steps.dispose();
    this.runners.dispose();
    this.chat.dispose();
    this.reload.dispose();
    this.board.dispose();
    this.watcher?.dispose();
    for (const d of this.settingsEvents) d.dispose();
  }
}

/**
 * Jobs in VS Code (issue #5, UX.md side panel): the job list and the selected job's view for the panel,
 * and every person's action on a job (start, review, continue, cancel) run through the core's JobRunner
 * under a cancellable progress. Held writes go to the inline approval (jobHeldWrites.ts); the review
 * chat streams into the same state (jobChat.ts).
 */
import type { SigningKey } from '../../core/approvals/approvalPath';
import type { Ticket } from '../../core/approvals/ticket';
import { JobPlanWatch } from './jobPlanWatch';
import * as vscode from 'vscode';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { ErrorInfo } from '../../shared/errorCodes';
import { isFinalStatus, jobActions } from '../../shared/jobActions';
import type { JobActionName } from '../../shared/jobActions';
import { assertNever } from '../../shared/protocol';
import type { ApprovalView, JobBusyView, JobIntent, JobListItem, JobView } from '../../shared/protocol';
import type { CockpitState, TimelineView } from '../../shared/cockpitProtocol';
import { readJobWrites } from './jobWrites';
import { JobChat } from './jobChat';
import { readSqlFiles, resolveJobFile } from './jobFiles';
import { JobHeldWrites } from './jobHeldWrites';
import { actor, JobRunners } from './jobRunners';
import type { JobLocalState } from './jobView';
import { IDLE, statusBarJob, toJobView, toListItem } from './jobView';
import type { FeatureDeps } from '../featureDeps';
import { coreServices } from '../lazyServices';
import { configuredProvider } from '../settings/modelProvider';
import type { JobBarState } from '../ui/statusBar';
import { JobSteps } from './jobSteps';
import type { Step } from './jobSteps';
import { throttle } from '../ui/throttle';

const SELECTED_KEY = 'postgresAgent.selectedJob';
/** Panel pushes while a reply streams or a job writes files: at most this often. */
const PUSH_INTERVAL_MS = 100;
const RELOAD_INTERVAL_MS = 250;

export interface JobControllerDeps extends FeatureDeps {
  showJobInStatusBar(job: JobBarState | undefined): void;
  /** Opens (or reveals) the job's cockpit. */
  showJob(jobId: string): Thenable<unknown>;
  /** Whether the job's cockpit is the editor the person is looking at (no notification needed then). */
  isShown(jobId: string): boolean;
}

/** What a job's view is built from, the view itself, and its activity: for the selected job and each open cockpit. */
interface JobEntry {
  inputs: Omit<Parameters<typeof toJobView>[0], 'local'> | undefined;
  view: JobView | null;
  timeline: TimelineView;
  /** The job's writes (cockpits only). */
  writes: ApprovalView[];
  error: ErrorInfo | null;
}

const NO_TIMELINE: TimelineView = { steps: [], marks: [] };

export interface JobsPanelState {
  jobs: JobListItem[];
  selectedJobId: string | null;
}

export class JobController implements vscode.Disposable {
  private readonly runners: JobRunners;
  private jobs: JobListItem[] = [];
  private selectedId: string | null;
  /** Jobs read in full: the selected one and those with an open cockpit (rebuilt when only this window's state changes). */
  private readonly entries = new Map<string, JobEntry>();
  /** Jobs with an open cockpit. */
  private readonly watched = new Set<string>();
  private readonly local = new Map<string, JobLocalState>();
  private readonly steps: JobSteps;
  private readonly writes: JobHeldWrites;
  private readonly chat: JobChat;
  private readonly planWatch: JobPlanWatch;
  private readonly push = throttle(() => this.deps.onChange(), PUSH_INTERVAL_MS);
  private readonly reload = throttle(() => void this.refresh(), RELOAD_INTERVAL_MS);
  private refreshChain: Promise<void> = Promise.resolve();
  private refreshQueued = false;
  private watcher: vscode.FileSystemWatcher | undefined;
  private restored: Promise<void> | undefined;

  constructor(private readonly deps: JobControllerDeps) {
    this.runners = new JobRunners(deps);
    this.steps = new JobSteps({
      runners: this.runners,
      logger: deps.logger,
      geminiKey: () => deps.geminiKey(),
      setLocal: (jobId, change) => this.setLocal(jobId, change),
      filesChanged: () => this.reload.request(),
      ended: () => this.refresh(),
    });
    this.writes = new JobHeldWrites({
      review: deps.review,
      runners: this.runners,
      logger: deps.logger,
      hooks: {
        run: (jobId, action, message, step) => this.steps.run(jobId, action, message, step, true),
        ended: (outcome) => this.afterStep(outcome, true).catch((error: unknown) => this.report(outcome.job.id, 'write', error)),
        fail: (jobId, error, notify) => this.report(jobId, 'write', error, notify),
        isFinal: (jobId) => isFinalStatus(this.jobs.find((j) => j.id === jobId)?.status ?? 'planning'),
        changed: () => this.push.request(),
      },
    });
    this.chat = new JobChat({
      runners: this.runners,
      session: deps.session,
      logger: deps.logger,
      geminiKey: () => deps.geminiKey(),
      local: (jobId) => this.localOf(jobId),
      setLocal: (jobId, change) => this.setLocal(jobId, change),
      refresh: () => this.refresh(),
      fail: (jobId, error) => this.report(jobId, 'planEdit', error),
    });
    this.planWatch = new JobPlanWatch(() => deps.review.ticketStore(), deps.logger, (jobId, ticket) => this.planDecided(jobId, ticket));
    const saved = deps.workspaceState.get<string>(SELECTED_KEY);
    this.selectedId = typeof saved === 'string' ? saved : null;
  }

  state(): JobsPanelState {
    return { jobs: this.jobs, selectedJobId: this.selectedId };
  }

  /** The job whose held write `ticketId` is, when this window knows it. */
  jobOfTicket(ticketId: string): string | undefined {
    const handed = this.writes.jobOfTicket(ticketId);
    if (handed !== undefined) return handed;
    for (const [id, entry] of this.entries) if (entry.view?.stop.kind === 'approval' && entry.view.stop.ticketId === ticketId) return id;
    return undefined;
  }

  /** One job's snapshot for its cockpit. */
  cockpitState(jobId: string): CockpitState {
    const entry = this.entries.get(jobId);
    return { jobId, job: this.viewOf(jobId), timeline: entry?.timeline ?? NO_TIMELINE, writes: entry?.writes ?? [], error: entry?.error ?? null };
  }

  /** The job's view with its held write's card as SqlReview tracks it right now (pending → running → executed). */
  private viewOf(jobId: string): JobView | null {
    const v = this.entries.get(jobId)?.view ?? null;
    return v && v.stop.kind === 'approval' ? { ...v, approval: this.writes.card(v.stop.ticketId) ?? v.approval } : v;
  }

  /** Selects the job and opens (or reveals) its cockpit: what every "open this job" does. */
  async open(jobId: string): Promise<void> {
    await this.select(jobId);
    await this.deps.showJob(jobId);
  }

  /** A cockpit opened on the job: keep its view read and current. */
  watch(jobId: string): Promise<void> {
    this.watched.add(jobId);
    return this.refresh();
  }

  /** Its cockpit closed. */
  unwatch(jobId: string): void {
    this.watched.delete(jobId);
    if (jobId !== this.selectedId) this.entries.delete(jobId);
  }

  /** Jobs known to this window (for the palette's pickers). */
  list(): JobListItem[] {
    return this.jobs;
  }

  selected(): JobView | null {
    return this.selectedId === null ? null : this.viewOf(this.selectedId);
  }

  /**
   * Once per window, when the panel is first shown: read the jobs from their folders, follow their files,
   * and give jobs held at a write their CodeLens back (never running anything on their own).
   */
  panelShown(): Promise<void> {
    if (!this.watcher) {
      this.watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(this.deps.rootDir), '.pgagent/jobs/**'));
      // The history's own objects change with every commit, which also changes the job's files.
      const changed = (uri: vscode.Uri) => {
        if (!uri.path.includes('/.history/') && !uri.path.includes('/.index/')) this.reload.request();
      };
      this.watcher.onDidCreate(changed);
      this.watcher.onDidChange(changed);
      this.watcher.onDidDelete(changed);
    }
    return this.refresh();
  }

  /** After the database is open: jobs waiting at a write get their CodeLens and card again. */
  restoreHeld(): Promise<void> {
    this.restored ??= this.writes.restoreAll().then(() => this.refresh()).catch((error: unknown) => {
      this.deps.logger.warn('could not restore jobs held at a write', { error: String(error) });
    });
    return this.restored;
  }

  async select(jobId: string): Promise<void> {
    if (this.selectedId !== jobId) {
      this.selectedId = jobId;
      this.push.request();
      await this.deps.workspaceState.update(SELECTED_KEY, jobId);
    }
    await this.refresh();
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
    const provider = await configuredProvider(this.deps, 'A job');
    if (!provider) return;
    let jobId: string;
    try {
      const job = await this.runners.withAction(undefined, { provider: undefined, signal: new AbortController().signal, onEvent: () => undefined }, (runner) => runner.create({ task }));
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
    return this.perform(jobId, 'approvePlan', 'Plan approved: running its first steps…', async (runner) => runner.approvePlan(jobId, await this.decisionBy(seenHash)), 'approvePlan');
  }

  requestChanges(jobId: string, feedback: string, seenHash?: string): Promise<void> {
    return this.perform(jobId, 'requestChanges', 'Revising the plan with your feedback…', async (runner) => runner.requestChanges(jobId, feedback, await this.decisionBy(seenHash)), 'requestChanges');
  }

  skipReview(jobId: string, seenHash?: string): Promise<void> {
    return this.perform(jobId, 'skipReview', 'Running the plan as is…', async (runner) => runner.skipReview(jobId, await this.decisionBy(seenHash)), 'skipReview');
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
    const view = this.viewOf(jobId);
    if (view && !jobActions(view).includes('pauseJob')) {
      void vscode.window.showWarningMessage(`Only a job that is planning or running can be paused (this one is ${view.status}).`);
      return;
    }
    try {
      await (await this.runners.viewer()).freeze(jobId);
      this.deps.logger.info('job paused by the person', { jobId, running: this.steps.isRunning(jobId) });
      if (this.steps.isRunning(jobId)) this.setLocal(jobId, { busy: { action: 'pause', message: 'Pausing after the current step…' } });
    } catch (error) {
      this.report(jobId, 'pause', error);
    }
    await this.refresh();
  }

  /** Cancels for good (after asking): a step in flight is stopped first; a held write is rejected by the core. */
  async cancelJob(jobId: string): Promise<void> {
    const title = this.jobs.find((j) => j.id === jobId)?.title ?? jobId;
    const confirm = await vscode.window.showWarningMessage(
      `Cancel the job "${title}"?`,
      { modal: true, detail: 'A cancelled job cannot be resumed. A write of the job waiting for approval is rejected; writes already run stay (each has its undo script).' },
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
  private async perform(jobId: string, action: JobBusyView['action'], message: string, step: Step, requires?: JobActionName, needsModel = true): Promise<void> {
    const view = this.viewOf(jobId);
    if (requires && view && !jobActions(view).includes(requires)) {
      void vscode.window.showWarningMessage(`That does not apply to the job right now (${view.busy ? view.busy.message : view.status}).`);
      return;
    }
    try {
      const outcome = await this.steps.run(jobId, action, message, step, needsModel);
      if (outcome) await this.afterStep(outcome, true);
    } catch (error) {
      this.report(jobId, action, error);
    }
  }

  /** Where a step ended: a held write goes to the inline approval; a finished job says so. */
  private async afterStep(outcome: JobOutcome, open: boolean): Promise<void> {
    const { job, stop } = outcome;
    switch (stop.kind) {
      case 'approval':
        await this.writes.handOver(outcome, open);
        return;
      case 'completed':
        this.notify('info', `Job "${job.title}" completed. ${stop.summary}`.trim(), job.id);
        return;
      case 'failed':
        this.setLocal(job.id, { error: stop.error });
        this.notify('error', `Job "${job.title}" failed: ${stop.error.message}${stop.error.advice ? ` ${stop.error.advice}` : ''}`, job.id, true);
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

  /** A notification with Open (the job's cockpit), unless the person is looking at that cockpit already. */
  private notify(severity: 'info' | 'error', message: string, jobId: string, always = false): void {
    if (!always && this.deps.isShown(jobId)) return;
    const shown = severity === 'error' ? vscode.window.showErrorMessage(message, 'Open') : vscode.window.showInformationMessage(message, 'Open');
    void shown.then((choice) => {
      if (choice === 'Open') void this.open(jobId);
    });
  }

  // ---- state -----------------------------------------------------------------------------------

  /** Re-reads the list and the selected job from their files; calls made while one waits share it. */
  refresh(): Promise<void> {
    if (this.refreshQueued) return this.refreshChain;
    this.refreshQueued = true;
    this.refreshChain = this.refreshChain
      .then(async () => {
        this.refreshQueued = false;
        await this.load();
      })
      .catch((error: unknown) => this.deps.logger.warn('reading the jobs failed', { error: String(error) }));
    return this.refreshChain;
  }

  private async load(): Promise<void> {
    const store = this.runners.store();
    const jobs = await store.list();
    this.jobs = jobs.map((job) => toListItem(job, this.steps.isRunning(job.id) || this.chat.answering(job.id)));
    if (this.selectedId !== null && !jobs.some((j) => j.id === this.selectedId)) this.selectedId = null;
    this.selectedId ??= jobs[0]?.id ?? null;
    const ids = new Set([...(this.selectedId === null ? [] : [this.selectedId]), ...this.watched]);
    for (const id of this.entries.keys()) if (!ids.has(id)) this.entries.delete(id);
    for (const id of ids) {
      if (!jobs.some((j) => j.id === id)) {
        // A cockpit of a job deleted since (or never there): it says so.
        this.entries.set(id, { inputs: undefined, view: null, timeline: NO_TIMELINE, writes: [], error: { code: 'BAD_INPUT', message: `There is no job ${id} in this workspace (any more).`, advice: 'Close this tab; Open Job… lists the jobs there are.' } });
        continue;
      }
      await this.loadOne(id);
    }
    this.updateStatusBar();
    this.push.request();
  }

  private async loadOne(id: string): Promise<void> {
    const services = coreServices();
    const store = this.runners.store();
    try {
      const outcome = await (await this.runners.viewer()).outcome(id);
      const detail = await services.readJobDetail(store, outcome);
      // The plan stays reviewable when the chat log cannot be read (the chat then starts empty).
      const chat = await services.readChat(store, id).catch((error: unknown) => {
        this.deps.logger.warn('reading the review chat failed', { jobId: id, error: String(error) });
        return [];
      });
      const sqlFiles = await readSqlFiles(store.jobDir(id));
      // A job held at a write shown before restoreAll ran (no database yet) gets its lens now.
      await this.writes.restore(outcome);
      const approval = outcome.stop.kind === 'approval' ? this.writes.card(outcome.stop.ticketId) : null;
      if (outcome.stop.kind === 'review' && outcome.stop.ticketId !== undefined) this.planWatch.watch(id, outcome.stop.ticketId);
      const cockpit = this.watched.has(id);
      const timeline = cockpit ? await services.readJobTimeline(store.jobDir(id)) : NO_TIMELINE;
      const writes = cockpit ? await this.writesOf(id) : [];
      const inputs = { detail, chat, approval, sqlFiles };
      this.entries.set(id, { inputs, view: toJobView({ ...inputs, local: this.localOf(id) }), timeline, writes, error: null });
    } catch (error) {
      const info = services.toAgentError(error).toInfo();
      this.deps.logger.warn('reading a job failed', { jobId: id, code: info.code, error: info.message });
      const previous = this.entries.get(id);
      this.entries.set(id, { inputs: previous?.inputs, view: previous?.view ?? null, timeline: previous?.timeline ?? NO_TIMELINE, writes: previous?.writes ?? [], error: info });
    }
  }

  /** The job's writes with their tickets as the store has them now (a store that cannot be read: none shown). */
  private async writesOf(jobId: string): Promise<ApprovalView[]> {
    try {
      const store = await this.deps.review.ticketStore();
      return await readJobWrites(this.runners.store().jobDir(jobId), async (ticketId) => {
        const ticket = await store.get(ticketId);
        return ticket ? { status: ticket.status, decisions: ticket.decisions } : undefined;
      });
    } catch (error) {
      this.deps.logger.warn('reading the job\'s writes failed', { jobId, error: String(error) });
      return [];
    }
  }

  private localOf(jobId: string): JobLocalState {
    return this.local.get(jobId) ?? IDLE;
  }

  /** Changes this window's state of a job and shows it at once (the files are re-read separately). */
  private setLocal(jobId: string, change: Partial<JobLocalState>): void {
    const current = this.localOf(jobId);
    // A pause asked for stays shown until the step ends (busy null); the step's progress does not hide it.
    const keepPause = current.busy?.action === 'pause' && change.busy != null;
    const next = { ...current, ...change, ...(keepPause ? { busy: current.busy } : {}) };
    this.local.set(jobId, next);
    const entry = this.entries.get(jobId);
    if (entry?.inputs) entry.view = toJobView({ ...entry.inputs, local: next });
    this.jobs = this.jobs.map((j) => (j.id === jobId ? { ...j, busy: next.busy !== null || next.pendingChat !== null } : j));
    this.updateStatusBar();
    this.push.request();
  }

  private report(jobId: string | undefined, action: JobBusyView['action'], error: unknown, notify = true): void {
    const info = isErrorInfo(error) ? error : coreServices().toAgentError(error).toInfo();
    this.deps.logger.error('job action failed', { jobId, action, code: info.code, error: info.message });
    if (jobId !== undefined) this.setLocal(jobId, { error: info });
    if (notify && info.code === 'JOB_BUSY') {
      // Another window, a CLI or a teammate drives the job: nothing failed here; watch it move in the panel.
      void vscode.window.showWarningMessage(info.message, 'Watch').then((choice) => {
        if (choice && jobId !== undefined) void this.open(jobId);
      });
    } else if (notify) {
      void vscode.window.showErrorMessage(`${info.message}${info.advice ? ` ${info.advice}` : ''}`, 'Show Job').then((choice) => {
        if (choice && jobId !== undefined) void this.open(jobId);
      });
    }
  }

  private updateStatusBar(): void {
    const busyId = this.steps.anyRunning();
    const busy = busyId === undefined ? undefined : this.jobs.find((j) => j.id === busyId);
    this.deps.showJobInStatusBar(statusBarJob(busy ? { id: busy.id, title: busy.title, action: this.localOf(busy.id).busy?.action } : undefined, this.selected()));
  }

  /** The person at this window deciding (signing with the window's approval key, if any), on the plan they saw. */
  private async decisionBy(seenHash: string | undefined): Promise<{ by?: string; key?: SigningKey; seenHash?: string }> {
    const key = await this.deps.review.signingKey();
    return { ...(key ? { key } : { by: actor() }), ...(seenHash !== undefined ? { seenHash } : {}) };
  }

  /**
   * A plan ticket decided elsewhere (a terminal, a teammate): the job goes on as it says, unless a step of
   * this window is already on it. Resolves whether the job has left the review of that ticket: a step that
   * read the ticket just before the decision stays at the review, and the watch then tries again.
   */
  private async planDecided(jobId: string, ticket: Ticket): Promise<boolean> {
    const atThisReview = async () => {
      const { stop } = await (await this.runners.viewer()).outcome(jobId);
      return stop.kind === 'review' && stop.ticketId === ticket.id;
    };
    // Decided here (the cockpit's Approve), or moved on already.
    if (!(await atThisReview())) return true;
    if (this.steps.isRunning(jobId)) return false;
    const by = ticket.decisions.at(-1)?.by ?? 'someone';
    this.deps.logger.info('plan ticket decided elsewhere: resuming the job', { jobId, ticket: ticket.id, status: ticket.status, by });
    await this.perform(jobId, 'continue', `Plan decided by ${by}: going on…`, (runner) => runner.resumeFromTicket(jobId));
    return !(await atThisReview());
  }

  dispose(): void {
    this.planWatch.dispose();
    this.steps.dispose();
    this.runners.dispose();
    this.chat.dispose();
    this.reload.dispose();
    this.push.dispose();
    this.watcher?.dispose();
  }
}

function isErrorInfo(value: unknown): value is ErrorInfo {
  return typeof value === 'object' && value !== null && !(value instanceof Error) && typeof (value as ErrorInfo).code === 'string' && typeof (value as ErrorInfo).message === 'string';
}


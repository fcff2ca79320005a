/**
 * What the window shows of its jobs: the list, the selected job, the view of each job read in full (the
 * selected one and those with an open cockpit), and this window's own state of a job (busy, error, the chat
 * in flight). Re-read from the files on refresh (calls made while one waits share it); pushes are throttled.
 * Host-pure (no vscode import).
 */
import type { Job } from '../../core/jobs/job';
import type { Logger } from '../../core/platform/logger';
import type { CockpitState } from '../../shared/cockpitProtocol';
import type { ApprovalView, JobListItem, JobView } from '../../shared/protocol';
import type { JobBarState } from '../ui/statusBar';
import { throttle } from '../../shared/throttle';
import type { JobLocalState } from './cockpit/jobView';
import { IDLE, statusBarJob, toJobView, toListItem } from './cockpit/jobView';
import type { JobEntry } from './jobEntries';
import { NO_TIMELINE } from './jobEntries';

/** Panel pushes while a reply streams or a job writes files: at most this often. */
const PUSH_INTERVAL_MS = 100;

export interface JobsPanelState {
  jobs: JobListItem[];
  selectedJobId: string | null;
}

export interface JobBoardDeps {
  logger: Logger;
  listJobs(): Promise<Job[]>;
  /** Reads one job in full (jobEntries.ts). */
  readEntry(id: string, local: JobLocalState, cockpit: boolean, previous: JobEntry | undefined): Promise<JobEntry>;
  /** The inline approval's card of a held write, as it is right now. */
  card(ticketId: string): ApprovalView | null;
  /** A step or a chat reply of this window is on the job. */
  busy(jobId: string): boolean;
  /** The job with a step in flight (for the status bar), if any. */
  anyRunning(): string | undefined;
  showJobInStatusBar(job: JobBarState | undefined): void;
  /** The panel's state changed: push it. */
  onChange(): void;
  /** The job selected when the window last closed, and where the selection is kept. */
  savedSelection: string | null;
  saveSelection(jobId: string): Thenable<void>;
}

export class JobBoard {
  private jobs: JobListItem[] = [];
  private selectedId: string | null;
  /** Jobs read in full: the selected one and those with an open cockpit (rebuilt when only this window's state changes). */
  private readonly entries = new Map<string, JobEntry>();
  /** Jobs with an open cockpit. */
  private readonly watched = new Set<string>();
  private readonly local = new Map<string, JobLocalState>();
  private readonly push = throttle(() => this.deps.onChange(), PUSH_INTERVAL_MS);
  private refreshChain: Promise<void> = Promise.resolve();
  private refreshQueued = false;

  constructor(private readonly deps: JobBoardDeps) {
    this.selectedId = deps.savedSelection;
  }

  state(): JobsPanelState {
    return { jobs: this.jobs, selectedJobId: this.selectedId };
  }

  /** Jobs known to this window (for the palette's pickers). */
  list(): JobListItem[] {
    return this.jobs;
  }

  job(jobId: string): JobListItem | undefined {
    return this.jobs.find((j) => j.id === jobId);
  }

  /** The job (read in full) whose view waits at the held write `ticketId`. */
  jobAtWrite(ticketId: string): string | undefined {
    for (const [id, entry] of this.entries)
      if (entry.view?.stop.kind === 'approval' && entry.view.stop.ticketId === ticketId) return id;
    return undefined;
  }

  /** One job's snapshot for its cockpit. */
  cockpitState(jobId: string): CockpitState {
    const entry = this.entries.get(jobId);
    return {
      jobId,
      job: this.viewOf(jobId),
      timeline: entry?.timeline ?? NO_TIMELINE,
      writes: entry?.writes ?? [],
      error: entry?.error ?? null,
    };
  }

  /** The job's view with its held write's card as the inline approval tracks it right now (pending → running → executed). */
  viewOf(jobId: string): JobView | null {
    const v = this.entries.get(jobId)?.view ?? null;
    return v && v.stop.kind === 'approval' ? { ...v, approval: this.deps.card(v.stop.ticketId) ?? v.approval } : v;
  }

  selected(): JobView | null {
    return this.selectedId === null ? null : this.viewOf(this.selectedId);
  }

  async select(jobId: string): Promise<void> {
    if (this.selectedId !== jobId) {
      this.selectedId = jobId;
      this.push.request();
      await this.deps.saveSelection(jobId);
    }
    await this.refresh();
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

  /** A change (a held write's card) to show now. */
  changed(): void {
    this.push.request();
  }

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
    const jobs = await this.deps.listJobs();
    this.jobs = jobs.map((job) => this.listItem(job, this.deps.busy(job.id)));
    if (this.selectedId !== null && !jobs.some((j) => j.id === this.selectedId)) this.selectedId = null;
    this.selectedId ??= jobs[0]?.id ?? null;
    const ids = new Set([...(this.selectedId === null ? [] : [this.selectedId]), ...this.watched]);
    for (const id of this.entries.keys()) if (!ids.has(id)) this.entries.delete(id);
    for (const id of ids) {
      if (!jobs.some((j) => j.id === id)) {
        // A cockpit of a job deleted since (or never there): it says so.
        this.entries.set(id, {
          inputs: undefined,
          view: null,
          timeline: NO_TIMELINE,
          writes: [],
          error: {
            code: 'BAD_INPUT',
            message: `There is no job ${id} in this workspace (any more).`,
            advice: 'Close this tab; Open Job… lists the jobs there are.',
          },
        });
        continue;
      }
      this.entries.set(id, await this.deps.readEntry(id, this.localOf(id), this.watched.has(id), this.entries.get(id)));
    }
    // Read in full now: the list says where they stand (their stop), in the status bar's words.
    this.jobs = this.jobs.map((j) => this.listItem(j, j.busy));
    this.updateStatusBar();
    this.push.request();
  }

  /** A job's list item: its `state` from this window's step on it and, when read in full, its stop. */
  private listItem(job: Parameters<typeof toListItem>[0], busy: boolean): JobListItem {
    return toListItem(job, busy, this.localOf(job.id).busy?.action, this.entries.get(job.id)?.view?.stop.kind);
  }

  localOf(jobId: string): JobLocalState {
    return this.local.get(jobId) ?? IDLE;
  }

  /** Changes this window's state of a job and shows it at once (the files are re-read separately). */
  setLocal(jobId: string, change: Partial<JobLocalState>): void {
    const current = this.localOf(jobId);
    // A pause asked for stays shown until the step ends (busy null); the step's progress does not hide it.
    const keepPause = current.busy?.action === 'pause' && change.busy != null;
    const next = { ...current, ...change, ...(keepPause ? { busy: current.busy } : {}) };
    this.local.set(jobId, next);
    const entry = this.entries.get(jobId);
    if (entry?.inputs) entry.view = toJobView({ ...entry.inputs, local: next });
    this.jobs = this.jobs.map((j) =>
      j.id === jobId ? this.listItem(j, next.busy !== null || next.pendingChat !== null) : j,
    );
    this.updateStatusBar();
    this.push.request();
  }

  private updateStatusBar(): void {
    const busyId = this.deps.anyRunning();
    const busy = busyId === undefined ? undefined : this.jobs.find((j) => j.id === busyId);
    const selected = this.selected();
    const item = selected && this.jobs.find((j) => j.id === selected.id);
    this.deps.showJobInStatusBar(statusBarJob(busy, item ? { item, stop: selected.stop.kind } : null));
  }

  dispose(): void {
    this.push.dispose();
  }
}

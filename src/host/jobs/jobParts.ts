/**
 * The parts of the window's jobs (runner, steps, held writes, notices, chat, plan watch, board), each built once
 * with the ports it takes, wired to each other; the controller (jobController.ts) holds them and routes the
 * person's actions.
 */
import type { Ticket } from '../../core/approvals/ticket';
import { isFinalStatus } from '../../shared/jobActions';
import type { JobBusyView } from '../../shared/protocol';
import type { FeatureDeps } from '../featureDeps';
import type { SettingsPort } from '../settings/settings';
import type { JobBarState } from '../ui/statusBar';
import * as vscode from 'vscode';
import type { JobChatPort } from './jobChat';
import { JobChat } from './jobChat';
import type { JobEntryPort } from './jobEntries';
import { readJobEntry } from './jobEntries';
import { JobBoard } from './jobBoard';
import { JobHeldWrites } from './jobHeldWrites';
import type { JobNoticesPort } from './jobNotices';
import { JobNotices, PROGRESS_UI, stepModel } from './jobNotices';
import { JobPlanWatch } from './jobPlanWatch';
import type { JobRunnersPort } from './jobRunners';
import { JobRunners } from './jobRunners';
import { jobRunnerSettings } from './jobSettings';
import { JobSteps } from './jobSteps';

const SELECTED_KEY = 'postgresAgent.selectedJob';

/** What the jobs' parts take of the core and the configured model, loaded when called (host/compose/jobsPort.ts). */
export interface JobsPort extends JobRunnersPort, JobEntryPort, JobChatPort, JobNoticesPort {}

export interface JobControllerDeps extends FeatureDeps {
  port: JobsPort;
  /** The settings in force, read once per step (host/compose/settingsPort.ts). */
  settings: SettingsPort;
  showJobInStatusBar(job: JobBarState | undefined): void;
  /** Opens (or reveals) the job's cockpit. */
  showJob(jobId: string): Thenable<unknown>;
  /** Whether the job's cockpit is the editor the person is looking at (no notification needed then). */
  isShown(jobId: string): boolean;
}

export interface JobParts {
  runners: JobRunners;
  board: JobBoard;
  steps: JobSteps;
  writes: JobHeldWrites;
  chat: JobChat;
  planWatch: JobPlanWatch;
  notices: JobNotices;
}

/** What the parts ask of the controller that holds them. */
export interface JobPartsHooks {
  open(jobId: string): Promise<void>;
  refresh(): Promise<void>;
  /** The job files changed: the views are read again (throttled). */
  reload(): void;
  report(jobId: string | undefined, action: JobBusyView['action'], error: unknown, notify?: boolean): void;
  planDecided(jobId: string, ticket: Ticket): Promise<void>;
}

/** Builds the parts once; each names what it takes, and reaches the others only through `parts` when called. */
export function buildJobParts(deps: JobControllerDeps, hooks: JobPartsHooks): JobParts {
  const parts = {} as JobParts;
  const { port, rootDir, logger } = deps;
  parts.runners = new JobRunners({
    port,
    rootDir,
    logger,
    session: deps.session,
    ticketStore: () => deps.tickets.ticketStore(),
    settings: () => jobRunnerSettings(deps.settings, rootDir),
    driverName: () => `VS Code (${vscode.env.appName})`,
  });
  parts.steps = new JobSteps({
    runners: parts.runners,
    logger,
    ui: PROGRESS_UI,
    model: stepModel(port),
    setLocal: (jobId, change) => parts.board.setLocal(jobId, change),
    filesChanged: () => hooks.reload(),
    ended: () => parts.board.refresh(),
  });
  parts.notices = new JobNotices({
    logger,
    port,
    isShown: (jobId) => deps.isShown(jobId),
    open: (jobId) => hooks.open(jobId),
    setLocal: (jobId, change) => parts.board.setLocal(jobId, change),
    handOver: (outcome, open) => parts.writes.handOver(outcome, open),
  });
  parts.writes = new JobHeldWrites({
    error: (code, message, advice) => port.error(code, message, advice),
    tickets: deps.tickets,
    approval: deps.approval,
    runners: parts.runners,
    logger: deps.logger,
    hooks: {
      run: (jobId, action, message, step) => parts.steps.run(jobId, action, message, step, true),
      ended: (outcome) =>
        parts.notices.afterStep(outcome, true).catch((error: unknown) => hooks.report(outcome.job.id, 'write', error)),
      fail: (jobId, error, notify) => hooks.report(jobId, 'write', error, notify),
      isFinal: (jobId) => isFinalStatus(parts.board.job(jobId)?.status ?? 'planning'),
      changed: () => parts.board.changed(),
    },
  });
  parts.chat = new JobChat({
    port,
    runners: parts.runners,
    session: deps.session,
    logger: deps.logger,
    local: (jobId) => parts.board.localOf(jobId),
    setLocal: (jobId, change) => parts.board.setLocal(jobId, change),
    refresh: () => hooks.refresh(),
    fail: (jobId, error) => hooks.report(jobId, 'planEdit', error),
  });
  parts.planWatch = new JobPlanWatch(
    () => deps.tickets.ticketStore(),
    logger,
    (jobId, ticket) => hooks.planDecided(jobId, ticket),
  );
  const saved = deps.workspaceState.get<string>(SELECTED_KEY);
  const entryDeps = {
    port,
    runners: parts.runners,
    ticketStore: () => deps.tickets.ticketStore(),
    held: parts.writes,
    planWatch: parts.planWatch,
    logger,
  };
  parts.board = new JobBoard({
    logger,
    listJobs: () => parts.runners.store().list(),
    readEntry: (id, local, cockpit, previous) => readJobEntry(entryDeps, id, local, cockpit, previous),
    card: (ticketId) => parts.writes.card(ticketId),
    busy: (jobId) => parts.steps.isRunning(jobId) || parts.chat.answering(jobId),
    anyRunning: () => parts.steps.anyRunning(),
    showJobInStatusBar: (job) => deps.showJobInStatusBar(job),
    onChange: () => deps.onChange(),
    savedSelection: typeof saved === 'string' ? saved : null,
    saveSelection: (jobId) => deps.workspaceState.update(SELECTED_KEY, jobId),
  });
  return parts;
}

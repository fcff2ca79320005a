/**
 * What the window shows of one job, read from its folder: the view's inputs (detail, chat, held write,
 * SQL files) and, for an open cockpit, its timeline and writes. Reading a job at its plan review starts
 * watching its plan ticket (decided elsewhere → resumed once). Host-pure: the held writes' lens (VS Code)
 * comes in as a port, so the refresh after a cockpit decision is driven by tests in node as it runs.
 */
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import type { Logger } from '../../core/platform/logger';
import type { TimelineView } from '../../shared/cockpitProtocol';
import type { ErrorInfo } from '../../shared/errorCodes';
import type { ApprovalView, JobView } from '../../shared/protocol';
import type { CoreServices } from '../lazyServices';
import { readSqlFiles } from './cockpit/jobFiles';
import { readJobWrites } from './cockpit/jobWrites';
import type { JobLocalState } from './cockpit/jobView';
import { toJobView } from './cockpit/jobView';
import type { JobPlanWatch } from './jobPlanWatch';
import type { JobRunners } from './jobRunners';

/** What a job's view is built from, the view itself, and its activity: for the selected job and each open cockpit. */
export interface JobEntry {
  inputs: Omit<Parameters<typeof toJobView>[0], 'local'> | undefined;
  view: JobView | null;
  timeline: TimelineView;
  /** The job's writes (cockpits only). */
  writes: ApprovalView[];
  error: ErrorInfo | null;
}

export const NO_TIMELINE: TimelineView = { steps: [], marks: [] };

/** The inline approval of the job's held write (host/jobs/jobHeldWrites.ts in VS Code). */
export interface HeldWritesPort {
  /** Gives a job held at a still-pending write its lens back (a window reload). */
  restore(outcome: JobOutcome): Promise<boolean>;
  card(ticketId: string): ApprovalView | null;
}

/** The core's readers of a job's files, loaded when called (host/compose/jobsPort.ts). */
export type JobEntryPort = Pick<CoreServices, 'readJobDetail' | 'readChat' | 'readJobTimeline' | 'toAgentError'>;

export interface JobEntryDeps {
  port: JobEntryPort;
  runners: Pick<JobRunners, 'viewer' | 'store'>;
  ticketStore(): Promise<TicketStore>;
  held: HeldWritesPort;
  planWatch: Pick<JobPlanWatch, 'watch'>;
  logger: Logger;
}

/** Reads job `id` (with its timeline and writes when `cockpit`); a failure keeps what `previous` showed, with the error. */
export async function readJobEntry(
  deps: JobEntryDeps,
  id: string,
  local: JobLocalState,
  cockpit: boolean,
  previous: JobEntry | undefined,
): Promise<JobEntry> {
  const store = deps.runners.store();
  try {
    const outcome = await (await deps.runners.viewer()).outcome(id);
    const detail = await deps.port.readJobDetail(store, outcome);
    // The plan stays reviewable when the chat log cannot be read (the chat then starts empty).
    const chat = await deps.port.readChat(store, id).catch((error: unknown) => {
      deps.logger.warn('reading the review chat failed', { jobId: id, error: String(error) });
      return [];
    });
    const sqlFiles = await readSqlFiles(store.jobDir(id));
    // A job held at a write shown before restoreAll ran (no database yet) gets its lens now.
    await deps.held.restore(outcome);
    const approval = outcome.stop.kind === 'approval' ? deps.held.card(outcome.stop.ticketId) : null;
    if (outcome.stop.kind === 'review' && outcome.stop.ticketId !== undefined)
      deps.planWatch.watch(id, outcome.stop.ticketId);
    const timeline = cockpit ? await deps.port.readJobTimeline(store.jobDir(id)) : NO_TIMELINE;
    const writes = cockpit ? await writesOf(deps, id) : [];
    const inputs = { detail, chat, approval, sqlFiles };
    return { inputs, view: toJobView({ ...inputs, local }), timeline, writes, error: null };
  } catch (error) {
    const info = deps.port.toAgentError(error).toInfo();
    deps.logger.warn('reading a job failed', { jobId: id, code: info.code, error: info.message });
    return {
      inputs: previous?.inputs,
      view: previous?.view ?? null,
      timeline: previous?.timeline ?? NO_TIMELINE,
      writes: previous?.writes ?? [],
      error: info,
    };
  }
}

/** The job's writes with their tickets as the store has them now (a store that cannot be read: none shown). */
async function writesOf(deps: JobEntryDeps, jobId: string): Promise<ApprovalView[]> {
  try {
    const store = await deps.ticketStore();
    return await readJobWrites(deps.runners.store().jobDir(jobId), async (ticketId) => {
      const ticket = await store.get(ticketId);
      return ticket ? { status: ticket.status, decisions: ticket.decisions } : undefined;
    });
  } catch (error) {
    deps.logger.warn("reading the job's writes failed", { jobId, error: String(error) });
    return [];
  }
}

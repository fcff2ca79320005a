/**
 * Running jobs: creates a job and drives its phases graph from checkpoint to checkpoint, turning each
 * person's action (approve the plan, request changes, approve a write, cancel) into a graph resume.
 * Used by the VS Code host and by `pg-agent job`; every call works in a new process from the files.
 */
import { dirname, join } from 'node:path';
import { Command } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { FileCheckpointSaver } from '../ask/fileCheckpointer';
import type { RunDeps } from '../ask/runDeps';
import { AgentError, toAgentError } from '../platform/errors';
import type { Embedder } from '../llm/embeddings';
import type { Job } from './job';
import { isTerminal } from './job';
import { jobAuditLog } from './jobAudit';
import { commitJob } from './phases/jobHistoryCommit';
import type { JobEvent, JobOutcome, JobStop } from './jobOutcome';
import type { JobLease } from './jobLease';
import { JobLeases } from './jobLease';
import { guardCheckpointer, guardJobStore } from './leaseGuards';
import { FileLeaseBackend } from './leaseBackends';
import type { JobStore } from './jobStore';
import type { Todo } from './todos';
import { renderTodos } from './todos';
import type { JobGraph } from './phases/jobGraph';
import { buildJobGraph } from './phases/jobGraph';
import type { JobStateValue } from './phases/jobState';
import { JobHaltedError } from './phases/jobStatusSync';
import { toolDocs } from './phases/jobTools';
import type { DecisionRequest } from '../approvals/approvalPath';
import { decideTicket, resumeWhenDecided } from '../approvals/approvalPath';
import { authorizeAtClaim } from '../approvals/policyInForce';
import { createPlanTicket, planHash } from '../approvals/planTicket';
import { SYSTEM_ACTOR } from '../approvals/ticketStore';
import { readPlanFiles } from './planFiles';
import type { PlanningSettings } from './planningSettings';
import { DEFAULT_PLANNING } from './planningSettings';

/** Without a provider, starting or continuing a job fails with a clear error. */
export interface JobRunnerDeps extends RunDeps {
  store: JobStore;
  /** .pgagent/checkpoints: the graph's checkpoints, keyed by job id. */
  checkpointsDir: string;
  planning?: Partial<PlanningSettings>;
  /** Time limit of one model call (default 60 s). */
  modelTimeoutMs?: number;
  /** Model calls allowed in one phase before it is ended (default 40). */
  maxModelCallsPerPhase?: number;
  onEvent?: (event: JobEvent) => void;
  /** Cancels the model call in flight (Cancel of a progress notification); the job stays resumable. */
  signal?: AbortSignal;
  /** One driver per job (Redis when configured); default: lock files beside the job folders. */
  leases?: JobLeases;
  /** Team mode's PostgreSQL checkpointer (jobCheckpointer.ts); default: files in checkpointsDir. */
  checkpointer?: BaseCheckpointSaver;
  /** The embedding model, when configured (vector_search in the review chat). */
  embedder?: Embedder;
}

export interface NewJobRequest {
  /** The task in the person's words; the first line (shortened) becomes the title unless one is given. */
  task: string;
  title?: string;
  /** Run straight from plan to execution without the review stop (planning.interactive: false for this job). */
  skipReview?: boolean;
}

/** Who decides at a stop of the job (signed when a key is given) and on what they saw: the one approval path's request. */
export type StopDecision = Omit<DecisionRequest, 'approve'>;

export class JobRunner {
  private readonly planning: PlanningSettings;
  private graphInstance: JobGraph | undefined;
  private readonly leases: JobLeases;
  /** The leases this runner holds now, by job: every write of job state checks its own first. */
  private readonly held = new Map<string, JobLease>();
  /** The checkpoint files of this workspace, when no other checkpointer (team mode) was given. */
  private fileSaver: FileCheckpointSaver | undefined;

  constructor(private readonly deps: JobRunnerDeps) {
    this.planning = { ...DEFAULT_PLANNING, ...deps.planning };
    this.leases = deps.leases ?? new JobLeases(new FileLeaseBackend(join(dirname(deps.store.root), 'leases')), { by: 'pg-agent', logger: deps.logger });
  }

  /**
   * Runs `body` as the job's only driver. The lease is taken before any other check (a second driver
   * learns at once, before the model is asked anything) and released when the step ends.
   */
  private async driving<T>(jobId: string, body: () => Promise<T>): Promise<T> {
    if (this.held.has(jobId)) return body();
    const lease = await this.leases.acquire(jobId);
    this.held.set(jobId, lease);
    try {
      return await body();
    } finally {
      this.held.delete(jobId);
      await lease.release();
    }
  }

  /**
   * Creates the job folder (status planning) and its tool docs, without running anything. The job's
   * history starts at its first phase boundary: a commit here would only hold what that one holds too,
   * and cost the person ~10 ms before the first model call.
   */
  async create(request: NewJobRequest): Promise<Job> {
    const task = request.task.trim();
    if (task === '') throw new AgentError('BAD_INPUT', 'The task is empty.', 'Describe what the job should do, e.g. "archive orders older than two years".');
    const job = await this.deps.store.create({
      title: request.title?.trim() || titleOf(task),
      task,
      connection: this.deps.connectionKey,
      ...(request.skipReview || !this.planning.interactive ? { skipReview: true } : {}),
      files: toolDocs(),
    });
    this.deps.onEvent?.({ type: 'status', jobId: job.id, status: job.status });
    return job;
  }

  /**
   * Creates a job whose plan was written elsewhere (a collaborative planning session): plan.md and todos.yaml
   * are given, and the job waits at its first plan review as if its strategic phase had just written them.
   * The person approves (or revises) it like any plan; every write of the tactical phase gets its own ticket.
   */
  async createAtReview(request: NewJobRequest & { plan: string; todos: Todo[]; origin: string; audit: Record<string, unknown>[] }): Promise<JobOutcome> {
    const job = await this.create(request);
    const { store } = this.deps;
    await store.writeFile(job.id, 'plan.md', request.plan);
    await store.writeFile(job.id, 'todos.yaml', renderTodos(request.todos));
    const workspace = await store.readFile(job.id, 'workspace.md');
    await store.writeFile(job.id, 'workspace.md', `${workspace.replace(/\n*$/, '\n')}\n## Origin\n\n${request.origin.trim()}\n`);
    for (const record of request.audit) await store.appendJsonl(job.id, 'audit.jsonl', { at: new Date().toISOString(), ...record });
    const summary = `plan from ${request.origin.split('\n')[0] ?? 'elsewhere'}`;
    // The checkpoint a finished strategic phase leaves: the graph's next step is the review stop.
    await this.graph().updateState(
      config(job.id),
      {
        jobId: job.id,
        phase: 'strategic',
        strategicIterations: 1,
        phaseEnd: { kind: 'plan_ready', summary },
        reviewRequired: true,
        messages: [{ role: 'user', content: `The task:\n${await store.readFile(job.id, 'workspace.md')}` }],
      },
      'endStrategic',
    );
    await store.setStatus(job.id, 'pending_review', 'plan written by a collaborative planning session');
    await commitJob(this.deps, job.id, `Review cycle 1: plan ready for review — ${summary}`);
    this.deps.onEvent?.({ type: 'status', jobId: job.id, status: 'pending_review' });
    return this.outcome(job.id);
  }

  /** Creates the job and runs it to its first stop (normally the plan review). */
  async start(request: NewJobRequest): Promise<JobOutcome> {
    this.requireModel();
    const job = await this.create(request);
    return this.driving(job.id, () => this.drive(job.id, { jobId: job.id }));
  }

  /** Runs a created or interrupted job from its checkpoint to the next stop; a frozen job is thawed first. */
  continue(jobId: string): Promise<JobOutcome> {
    return this.driving(jobId, () => this.continueDriven(jobId));
  }

  private async continueDriven(jobId: string): Promise<JobOutcome> {
    let job = await this.deps.store.get(jobId);
    if (isTerminal(job.status)) throw new AgentError('BAD_INPUT', `Job ${jobId} is ${job.status}; it cannot continue.`, 'Start a new job instead.');
    if (job.status === 'frozen' && job.frozenFrom) job = await this.deps.store.setStatus(jobId, job.frozenFrom, 'continued by the person');
    const current = await this.outcome(jobId);
    if (current.stop.kind === 'review' || current.stop.kind === 'approval') return this.resumeFromTicket(jobId);
    this.requireModel();
    const started = (await this.graph().getState(config(jobId))).createdAt !== undefined;
    return this.drive(jobId, started ? null : { jobId });
  }

  /** At the plan review: approve its plan ticket (what the person saw), and run the first tactical phase to its next stop. */
  async approvePlan(jobId: string, decision: StopDecision): Promise<JobOutcome> {
    return this.decidePlan(jobId, { ...decision, approve: true });
  }

  /** At the plan review: reject the plan ticket with the feedback, which goes to workspace.md (dated) and to the agent; another strategic iteration. */
  requestChanges(jobId: string, feedback: string, decision: StopDecision): Promise<JobOutcome> {
    if (feedback.trim() === '') return Promise.reject(new AgentError('BAD_INPUT', 'The feedback is empty.', 'Write what should change in the plan.'));
    return this.decidePlan(jobId, { ...decision, approve: false, comment: feedback.trim() });
  }

  /** At the plan review: run as is (the plan ticket approved, recorded as a skipped review). While planning: do not stop for review this time. */
  async skipReview(jobId: string, decision: StopDecision): Promise<JobOutcome> {
    const job = await this.deps.store.get(jobId);
    if (job.status === 'planning') {
      await this.deps.store.update(jobId, { skipReview: true });
      await jobAuditLog(this.deps.store).recordJob(jobId, { type: 'review', action: 'skip', by: decision.key?.name ?? decision.by ?? 'pg-agent', cycle: job.reviewCycles });
      return this.outcome(jobId);
    }
    return this.decidePlan(jobId, { ...decision, approve: true, comment: decision.comment ?? 'review skipped: run as is' }, { skip: true });
  }

  /** At a held write: the person's decision (recorded on the ticket), then the job goes on. */
  decideWrite(jobId: string, decision: StopDecision & { approve: boolean }): Promise<JobOutcome> {
    return this.driving(jobId, () => this.decideWriteDriven(jobId, decision));
  }

  private async decideWriteDriven(jobId: string, decision: StopDecision & { approve: boolean }): Promise<JobOutcome> {
    const current = await this.outcome(jobId);
    if (current.stop.kind !== 'approval') throw notAt(current, 'a write waiting for approval');
    if (decision.approve) this.requireModel();
    await decideTicket(this.deps.ticketStore, current.stop.ticketId, decision);
    return this.resumeFromTicket(jobId);
  }

  /**
   * At a stop decided elsewhere (pg-agent approvals approve/reject, a teammate over Redis, another window)
   * or here: the job goes on as its ticket says; still undecided, it stays where it is.
   */
  resumeFromTicket(jobId: string, hint?: { skip: boolean }): Promise<JobOutcome> {
    return this.driving(jobId, () => this.resumeFromTicketDriven(jobId, hint));
  }

  private async resumeFromTicketDriven(jobId: string, hint?: { skip: boolean }): Promise<JobOutcome> {
    const current = await this.outcome(jobId);
    const ticketId = current.stop.kind === 'approval' ? current.stop.ticketId : current.stop.kind === 'review' ? current.stop.ticketId : undefined;
    if (ticketId === undefined) return current;
    return resumeWhenDecided(
      this.deps.ticketStore,
      ticketId,
      async (decision) => {
        if (decision.approve) {
          // Approved, but not (yet) as the team's policy wants: exit 4 naming what is missing; the job stays at its stop.
          const ticket = await this.deps.ticketStore.get(ticketId);
          const authorize = await this.deps.db.withSession((session) => authorizeAtClaim(session, { ...this.deps.settings, connection: this.deps.connectionKey }));
          const refusal = ticket ? authorize(ticket) : undefined;
          if (refusal) throw refusal;
        }
        if (decision.approve || current.stop.kind === 'review') this.requireModel();
        return this.drive(jobId, new Command({ resume: { ticketId, ...(hint ? hint : {}) } }));
      },
      () => current,
    );
  }

  /** The plan ticket of the review, made anew when plan.md or todos.yaml changed since (a plan edit in review). */
  private async currentPlanTicket(jobId: string): Promise<{ id: string; hash: string }> {
    const state = (await this.graph().getState(config(jobId))).values as Partial<JobStateValue>;
    const files = await readPlanFiles(this.deps.store, jobId);
    const hash = planHash(files);
    const ref = state.planTicket;
    if (ref && ref.hash === hash) return ref;
    if (ref) {
      const old = await this.deps.ticketStore.get(ref.id);
      if (old?.status === 'PENDING_APPROVAL') await this.deps.ticketStore.decide(ref.id, { approve: false, by: SYSTEM_ACTOR, comment: 'superseded: the plan changed during its review' });
    }
    const job = await this.deps.store.get(jobId);
    const ticket = await createPlanTicket(this.deps.ticketStore, { ...files, cycle: job.reviewCycles, title: job.title, connection: this.deps.connectionKey, requestedBy: this.deps.requestedBy });
    const next = { id: ticket.id, hash: ticket.sqlHash };
    await this.graph().updateState(config(jobId), { planTicket: next }, 'endStrategic');
    return next;
  }

  private decidePlan(jobId: string, decision: StopDecision & { approve: boolean }, hint?: { skip: boolean }): Promise<JobOutcome> {
    return this.driving(jobId, async () => {
      const current = await this.outcome(jobId);
      if (current.stop.kind !== 'review') throw notAt(current, 'the plan review');
      this.requireModel();
      const ticket = await this.currentPlanTicket(jobId);
      await decideTicket(this.deps.ticketStore, ticket.id, decision);
      return this.resumeFromTicket(jobId, hint);
    });
  }

  /** Cancels the job (final); a pending ticket of the job is rejected so it can never run. */
  async cancel(jobId: string, by: string): Promise<JobOutcome> {
    const current = await this.outcome(jobId);
    if (isTerminal(current.job.status)) throw notAt(current, 'a job that is still going');
    const ticketId = current.stop.kind === 'approval' || current.stop.kind === 'review' ? current.stop.ticketId : undefined;
    if (ticketId !== undefined) {
      const ticket = await this.deps.ticketStore.get(ticketId);
      if (ticket?.status === 'PENDING_APPROVAL') await this.deps.ticketStore.decide(ticket.id, { approve: false, by, comment: 'the job was cancelled' });
    }
    await this.deps.store.setStatus(jobId, 'cancelled', `cancelled by ${by}`);
    await commitJob(this.deps, jobId, `Job cancelled by ${by}`);
    this.deps.onEvent?.({ type: 'status', jobId, status: 'cancelled' });
    return this.outcome(jobId);
  }

  /** Pauses a job (status frozen): a run in flight stops at its next step boundary, in any process. */
  async freeze(jobId: string): Promise<JobOutcome> {
    const job = await this.deps.store.get(jobId);
    if (job.status !== 'planning' && job.status !== 'running') {
      throw new AgentError('BAD_INPUT', `Job ${jobId} is ${job.status}; only a job that is planning or running can be paused.`);
    }
    await this.deps.store.setStatus(jobId, 'frozen', 'paused by the person');
    this.deps.onEvent?.({ type: 'status', jobId, status: 'frozen' });
    return this.outcome(jobId);
  }

  /** Where the job stands (no model call, no database access). */
  async outcome(jobId: string, error?: unknown): Promise<JobOutcome> {
    const job = await this.deps.store.get(jobId);
    const snapshot = await this.graph().getState(config(jobId));
    const state = snapshot.values as Partial<JobStateValue>;
    const execution = state.lastExecution;
    // What the person looks at now: the panel sends this hash back with its decision (a stale click is refused).
    const shownHash = snapshot.next.includes('reviewGate') ? planHash(await readPlanFiles(this.deps.store, jobId)) : '';
    const stop = ((): JobStop => {
      switch (job.status) {
        case 'cancelled':
          return { kind: 'cancelled' };
        case 'frozen':
          return { kind: 'frozen' };
        case 'completed':
          return { kind: 'completed', summary: state.phaseEnd?.kind === 'job_complete' ? state.phaseEnd.summary : '' };
        case 'failed':
          return { kind: 'failed', error: state.error ?? { code: 'JOB_FAILED', message: 'The job failed.' } };
        default:
          break;
      }
      if (snapshot.next.includes('reviewGate')) {
        return {
          kind: 'review',
          cycle: job.reviewCycles,
          maxReviewCycles: this.planning.maxReviewCycles,
          overLimit: job.reviewCycles >= this.planning.maxReviewCycles,
          ...(state.planTicket ? { ticketId: state.planTicket.id, planHash: shownHash } : {}),
        };
      }
      const pending = state.pendingWrite;
      if (snapshot.next.includes('awaitWrite') && pending) {
        return { kind: 'approval', ticketId: pending.ticketId, sql: pending.sql, sqlFile: pending.sqlFile, impact: pending.impact, todoId: pending.todoId };
      }
      return error === undefined ? { kind: 'interrupted' } : { kind: 'interrupted', error: toAgentError(error).toInfo() };
    })();
    return { job, stop, ...(execution ? { execution } : {}) };
  }

  /** Runs the graph from its checkpoint to the next stop. A failed step leaves the job where it was. */
  private async drive(jobId: string, input: Parameters<JobGraph['invoke']>[0]): Promise<JobOutcome> {
    const before = (await this.graph().getState(config(jobId))).values as Partial<JobStateValue>;
    let failure: unknown;
    try {
      await this.graph().invoke(input, { ...config(jobId), recursionLimit: 10_000, ...(this.deps.signal ? { signal: this.deps.signal } : {}) });
    } catch (error) {
      if (!(error instanceof JobHaltedError)) {
        failure = error;
        const e = toAgentError(error);
        this.deps.logger.warn('job step failed; the job stays where it was', { jobId, code: e.code, error: e.message });
        await jobAuditLog(this.deps.store).recordJob(jobId, { type: 'error', node: 'runner', code: e.code, message: e.message });
      }
    }
    const outcome = await this.outcome(jobId, failure);
    if (failure === undefined) await this.pruneCheckpoints(jobId, outcome);
    // Only an execution that happened in this run is reported as this outcome's.
    if (outcome.execution && outcome.execution.ticketId === before.lastExecution?.ticketId) delete outcome.execution;
    return outcome;
  }

  /**
   * The jobs' checkpointer, remembered when it is the file one — whether the CLI or VS Code passed it in or it is
   * made here — so that its retention runs for every real job (the team database keeps its own).
   */
  private fileCheckpointer(): BaseCheckpointSaver {
    const saver = this.deps.checkpointer ?? new FileCheckpointSaver(this.deps.checkpointsDir);
    this.fileSaver = saver instanceof FileCheckpointSaver ? saver : undefined;
    return saver;
  }

  /** Checkpoint retention (FileCheckpointSaver.prune), by the driver that still holds the lease; the team database keeps its own. */
  private async pruneCheckpoints(jobId: string, outcome: JobOutcome): Promise<void> {
    if (!this.fileSaver) return;
    try {
      await this.held.get(jobId)?.assertHeld();
      const { before, after } = this.fileSaver.prune(jobId, { finished: isTerminal(outcome.job.status) });
      if (after < before) this.deps.logger.debug('job checkpoints pruned', { jobId, before, after });
    } catch (error) {
      this.deps.logger.warn('could not prune the job checkpoints; they stay as they are', { jobId, error: error instanceof Error ? error.message : String(error) });
    }
  }

  private requireModel(): void {
    if (!this.deps.provider) {
      throw new AgentError('CONFIG_INVALID', 'Jobs need a language model and none is configured.', 'Set a Gemini API key (or GEMINI_API_KEY), or an OpenAI-compatible endpoint.');
    }
  }

  private graph(): JobGraph {
    if (this.graphInstance) return this.graphInstance;
    const audit = jobAuditLog(this.deps.store);
    const guard = (jobId: string) => this.held.get(jobId)?.assertHeld() ?? Promise.resolve();
    this.graphInstance = buildJobGraph(
      {
        store: guardJobStore(this.deps.store, guard),
        db: this.deps.db,
        connectionKey: this.deps.connectionKey,
        ticketStore: this.deps.ticketStore,
        provider: this.deps.provider,
        loadSnapshot: this.deps.loadSnapshot,
        ...(this.deps.invalidateSchema ? { invalidateSchema: this.deps.invalidateSchema } : {}),
        ...(this.deps.embedder ? { embedder: this.deps.embedder } : {}),
        settings: this.deps.settings,
        logger: this.deps.logger,
        requestedBy: this.deps.requestedBy,
        planning: this.planning,
        modelTimeoutMs: this.deps.modelTimeoutMs ?? 60_000,
        maxModelCallsPerPhase: this.deps.maxModelCallsPerPhase ?? 40,
        audit: (jobId, event) => audit.recordJob(jobId, event),
        emit: (event) => this.deps.onEvent?.(event),
        signal: this.deps.signal,
        now: () => new Date(),
      },
      guardCheckpointer(this.fileCheckpointer(), guard),
    );
    return this.graphInstance;
  }
}

const config = (jobId: string) => ({ configurable: { thread_id: jobId } });

/** The first line of the task, cut at a word boundary near 60 characters. */
export function titleOf(task: string): string {
  const line = task.split('\n')[0]?.trim() ?? task;
  if (line.length <= 60) return line;
  const cut = line.slice(0, 60);
  const space = cut.lastIndexOf(' ');
  return `${space > 30 ? cut.slice(0, space) : cut}…`;
}

function notAt(current: JobOutcome, what: string): AgentError {
  const where = current.stop.kind === 'review' ? 'waiting for the plan review' : current.stop.kind === 'approval' ? 'waiting for a write approval' : current.job.status;
  return new AgentError('BAD_INPUT', `Job ${current.job.id} is not at ${what}: it is ${where}.`, 'Show the job to see what it waits for.');
}

/**
 * Running jobs: creates a job and drives its phases graph from checkpoint to checkpoint, turning each
 * person's action (approve the plan, request changes, approve a write, cancel) into a graph resume.
 * Used by the VS Code host (one runner per window, each step bound with `forStep`) and by `pg-agent job`;
 * every call works from the files, so any process can pick a job up. A decision carries what it read (the
 * plan's hash, the decided ticket) on to the resume instead of reading it again.
 */
import { Command } from '@langchain/langgraph';
import type { Ticket } from '../approvals/ticket';
import { decideTicket, decisionOf } from '../approvals/approvalPath';
import { createPlanTicket } from '../approvals/planTicket';
import { SYSTEM_ACTOR } from '../approvals/ticketStore';
import { AgentError, toAgentError } from '../platform/errors';
import type { Job } from './job';
import { isTerminal } from './job';
import { jobAuditLog } from './jobAudit';
import type { JobLease } from './jobLease';
import type { JobOutcome } from './jobOutcome';
import type { JobRunnerDeps, JobStepDeps, NewJobRequest, StopDecision } from './jobRunnerDeps';
import type { Standing } from './jobStanding';
import { notAt, readStanding, stopTicket, threadOf } from './jobStanding';
import type { JobGraph } from './phases/jobGraph';
import { commitJob } from './phases/jobHistoryCommit';
import { JobHaltedError } from './phases/jobStatusSync';
import { toolDocs } from './phases/jobTools';
import type { PlanningSettings } from './planningSettings';
import { DEFAULT_PLANNING } from './planningSettings';
import type { StepScope } from './sharedJobGraph';
import { readClaimAuthorizer, SharedJobGraph } from './sharedJobGraph';
import type { Todo } from './todos';
import { renderTodos } from './todos';

export type { JobRunnerDeps, JobStepDeps, NewJobRequest, StopDecision } from './jobRunnerDeps';

export class JobRunner {
  private readonly planning: PlanningSettings;
  private readonly shared: SharedJobGraph;
  /** This runner's step: its deps and the leases it holds now (each write of job state checks its own first). */
  private readonly scope: StepScope;

  /** `shared` is given only by `forStep`: the steps of one runner share its compiled graph, checkpointer and leases. */
  constructor(
    private readonly deps: JobRunnerDeps,
    shared?: SharedJobGraph,
  ) {
    this.planning = { ...DEFAULT_PLANNING, ...deps.planning };
    this.shared = shared ?? new SharedJobGraph(deps, this.planning);
    this.scope = { deps, held: new Map<string, JobLease>() };
  }

  /** This runner for one step: the step's database, model, progress and Cancel; the graph is not compiled again. */
  forStep(step: JobStepDeps): JobRunner {
    return new JobRunner({ ...this.deps, ...step }, this.shared);
  }

  /**
   * Runs `body` as the job's only driver. The lease is taken before any other check (a second driver
   * learns at once, before the model is asked anything) and released when the step ends.
   */
  private driving<T>(jobId: string, body: () => Promise<T>): Promise<T> {
    const held = this.scope.held;
    if (held.has(jobId)) return body();
    return this.shared.within(this.scope, async () => {
      const lease = await this.shared.leases.acquire(jobId);
      held.set(jobId, lease);
      try {
        return await body();
      } finally {
        held.delete(jobId);
        await lease.release();
      }
    });
  }

  private graph(): JobGraph {
    return this.shared.graph();
  }

  private standing(jobId: string, options: { hashPlan: boolean; error?: unknown }): Promise<Standing> {
    return readStanding(this.deps.store, this.graph(), this.planning, jobId, options);
  }

  /**
   * Creates the job folder (status planning) and its tool docs, without running anything. The job's
   * history starts at its first phase boundary: a commit here would only hold what that one holds too,
   * and cost the person ~10 ms before the first model call.
   */
  async create(request: NewJobRequest): Promise<Job> {
    const task = request.task.trim();
    if (task === '')
      throw new AgentError(
        'BAD_INPUT',
        'The task is empty.',
        'Describe what the job should do, e.g. "archive orders older than two years".',
      );
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
  async createAtReview(
    request: NewJobRequest & { plan: string; todos: Todo[]; origin: string; audit: Record<string, unknown>[] },
  ): Promise<JobOutcome> {
    const job = await this.create(request);
    const { store } = this.deps;
    await store.writeFile(job.id, 'plan.md', request.plan);
    await store.writeFile(job.id, 'todos.yaml', renderTodos(request.todos));
    const workspace = await store.readFile(job.id, 'workspace.md');
    await store.writeFile(
      job.id,
      'workspace.md',
      `${workspace.replace(/\n*$/, '\n')}\n## Origin\n\n${request.origin.trim()}\n`,
    );
    for (const record of request.audit)
      await store.appendJsonl(job.id, 'audit.jsonl', { at: new Date().toISOString(), ...record });
    const summary = `plan from ${request.origin.split('\n')[0] ?? 'elsewhere'}`;
    // The checkpoint a finished strategic phase leaves: the graph's next step is the review stop.
    await this.graph().updateState(
      threadOf(job.id),
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
    return this.driving(job.id, () => this.drive(job.id, { jobId: job.id }, undefined));
  }

  /** Runs a created or interrupted job from its checkpoint to the next stop; a frozen job is thawed first. */
  continue(jobId: string): Promise<JobOutcome> {
    return this.driving(jobId, async () => {
      const job = await this.deps.store.get(jobId);
      if (isTerminal(job.status))
        throw new AgentError(
          'BAD_INPUT',
          `Job ${jobId} is ${job.status}; it cannot continue.`,
          'Start a new job instead.',
        );
      if (job.status === 'frozen' && job.frozenFrom)
        await this.deps.store.setStatus(jobId, job.frozenFrom, 'continued by the person');
      const at = await this.standing(jobId, { hashPlan: false });
      const ticketId = stopTicket(at.outcome.stop);
      if (ticketId !== undefined) return this.resumeAt(at.outcome, ticketId, await this.deps.ticketStore.get(ticketId));
      this.requireModel();
      return this.drive(jobId, at.started ? null : { jobId }, at.outcome.execution?.ticketId);
    });
  }

  /** At the plan review: approve its plan ticket (what the person saw), and run the first tactical phase to its next stop. */
  approvePlan(jobId: string, decision: StopDecision): Promise<JobOutcome> {
    return this.decidePlan(jobId, { ...decision, approve: true });
  }

  /** At the plan review: reject the plan ticket with the feedback, which goes to workspace.md (dated) and to the agent; another strategic iteration. */
  requestChanges(jobId: string, feedback: string, decision: StopDecision): Promise<JobOutcome> {
    if (feedback.trim() === '')
      return Promise.reject(
        new AgentError('BAD_INPUT', 'The feedback is empty.', 'Write what should change in the plan.'),
      );
    return this.decidePlan(jobId, { ...decision, approve: false, comment: feedback.trim() });
  }

  /** At the plan review: run as is (the plan ticket approved, recorded as a skipped review). While planning: do not stop for review this time. */
  async skipReview(jobId: string, decision: StopDecision): Promise<JobOutcome> {
    const job = await this.deps.store.get(jobId);
    if (job.status === 'planning') {
      await this.deps.store.update(jobId, { skipReview: true });
      await jobAuditLog(this.deps.store).recordJob(jobId, {
        type: 'review',
        action: 'skip',
        by: decision.key?.name ?? decision.by ?? 'pg-agent',
        cycle: job.reviewCycles,
      });
      return this.outcome(jobId);
    }
    return this.decidePlan(
      jobId,
      { ...decision, approve: true, comment: decision.comment ?? 'review skipped: run as is' },
      { skip: true },
    );
  }

  /** At a held write: the person's decision (recorded on the ticket), then the job goes on. */
  decideWrite(jobId: string, decision: StopDecision & { approve: boolean }): Promise<JobOutcome> {
    return this.driving(jobId, async () => {
      const { outcome } = await this.standing(jobId, { hashPlan: false });
      if (outcome.stop.kind !== 'approval') throw notAt(outcome, 'a write waiting for approval');
      if (decision.approve) this.requireModel();
      const decided = await decideTicket(this.deps.ticketStore, outcome.stop.ticketId, decision);
      return this.resumeAt(outcome, outcome.stop.ticketId, decided);
    });
  }

  /**
   * At a stop decided elsewhere (pg-agent approvals approve/reject, a teammate over Redis, another window)
   * or here: the job goes on as its ticket says; still undecided, it stays where it is.
   */
  resumeFromTicket(jobId: string): Promise<JobOutcome> {
    return this.driving(jobId, async () => {
      const { outcome } = await this.standing(jobId, { hashPlan: false });
      const ticketId = stopTicket(outcome.stop);
      if (ticketId === undefined) return outcome;
      return this.resumeAt(outcome, ticketId, await this.deps.ticketStore.get(ticketId));
    });
  }

  /** Goes on from the stop `at` as its ticket says (read once by the caller, or the one just decided); still pending: stays. */
  private async resumeAt(
    at: JobOutcome,
    ticketId: string,
    ticket: Ticket | undefined,
    hint?: { skip: boolean },
  ): Promise<JobOutcome> {
    const decision = decisionOf(ticket);
    // Still undecided: it stays where it is (at the review, shown with the hash of its plan).
    if (!decision) return at.stop.kind === 'review' ? this.outcome(at.job.id) : at;
    if (decision.approve && ticket) {
      // Approved, but not (yet) as the team's policy wants: exit 4 naming what is missing; the job stays at its stop.
      const authorize = await readClaimAuthorizer(this.deps);
      const refusal = authorize(ticket);
      if (refusal) throw refusal;
      // The plan's claim in this step uses the policy just read (a write's claim is executeApproved's own).
      this.scope.authorized = { ticketId, authorize };
    }
    if (decision.approve || at.stop.kind === 'review') this.requireModel();
    try {
      return await this.drive(
        at.job.id,
        new Command({ resume: { ticketId, ...(hint ?? {}) } }),
        at.execution?.ticketId,
      );
    } finally {
      this.scope.authorized = undefined;
    }
  }

  /**
   * A decision at the plan review: the plan is hashed once, here; a plan edited during its review gets a new
   * ticket (the old one superseded) and the person's decision (with the hash they saw) goes on that one.
   */
  private decidePlan(
    jobId: string,
    decision: StopDecision & { approve: boolean },
    hint?: { skip: boolean },
  ): Promise<JobOutcome> {
    return this.driving(jobId, async () => {
      const at = await this.standing(jobId, { hashPlan: true });
      if (at.outcome.stop.kind !== 'review') throw notAt(at.outcome, 'the plan review');
      this.requireModel();
      const ticketId = await this.currentPlanTicket(at);
      const decided = await decideTicket(this.deps.ticketStore, ticketId, decision);
      return this.resumeAt(at.outcome, ticketId, decided, hint);
    });
  }

  /** The plan ticket of the review, made anew when plan.md or todos.yaml changed since (a plan edit in review). */
  private async currentPlanTicket(at: Standing): Promise<string> {
    const { job } = at.outcome;
    const ref = at.state.planTicket;
    if (!at.plan) throw new AgentError('INTERNAL', `The plan of job ${job.id} was not read at its review.`);
    if (ref && ref.hash === at.plan.hash) return ref.id;
    if (ref) {
      const old = await this.deps.ticketStore.get(ref.id);
      if (old?.status === 'PENDING_APPROVAL')
        await this.deps.ticketStore.decide(ref.id, {
          approve: false,
          by: SYSTEM_ACTOR,
          comment: 'superseded: the plan changed during its review',
        });
    }
    const ticket = await createPlanTicket(this.deps.ticketStore, {
      ...at.plan.files,
      cycle: job.reviewCycles,
      title: job.title,
      connection: this.deps.connectionKey,
      requestedBy: this.deps.requestedBy,
    });
    await this.graph().updateState(
      threadOf(job.id),
      { planTicket: { id: ticket.id, hash: ticket.sqlHash } },
      'endStrategic',
    );
    return ticket.id;
  }

  /** Cancels the job (final); a pending ticket of the job is rejected so it can never run. */
  async cancel(jobId: string, by: string): Promise<JobOutcome> {
    const { outcome: current } = await this.standing(jobId, { hashPlan: false });
    if (isTerminal(current.job.status)) throw notAt(current, 'a job that is still going');
    const ticketId = stopTicket(current.stop);
    if (ticketId !== undefined) {
      const ticket = await this.deps.ticketStore.get(ticketId);
      if (ticket?.status === 'PENDING_APPROVAL')
        await this.deps.ticketStore.decide(ticket.id, { approve: false, by, comment: 'the job was cancelled' });
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
      throw new AgentError(
        'BAD_INPUT',
        `Job ${jobId} is ${job.status}; only a job that is planning or running can be paused.`,
      );
    }
    await this.deps.store.setStatus(jobId, 'frozen', 'paused by the person');
    this.deps.onEvent?.({ type: 'status', jobId, status: 'frozen' });
    return this.outcome(jobId);
  }

  /** Where the job stands (no model call, no database access); at the review, with the hash of the plan shown. */
  async outcome(jobId: string): Promise<JobOutcome> {
    return (await this.standing(jobId, { hashPlan: true })).outcome;
  }

  /**
   * Runs the graph from its checkpoint to the next stop. A failed step leaves the job where it was. `executedBefore`:
   * the last execution's ticket before this run (only an execution of this run is reported as the outcome's).
   */
  private async drive(
    jobId: string,
    input: Parameters<JobGraph['invoke']>[0],
    executedBefore: string | undefined,
  ): Promise<JobOutcome> {
    let failure: unknown;
    try {
      await this.graph().invoke(input, {
        ...threadOf(jobId),
        recursionLimit: 10_000,
        ...(this.deps.signal ? { signal: this.deps.signal } : {}),
      });
    } catch (error) {
      if (!(error instanceof JobHaltedError)) {
        failure = error;
        const e = toAgentError(error);
        this.deps.logger.warn('job step failed; the job stays where it was', { jobId, code: e.code, error: e.message });
        await jobAuditLog(this.deps.store).recordJob(jobId, {
          type: 'error',
          node: 'runner',
          code: e.code,
          message: e.message,
        });
      }
    }
    const { outcome } = await this.standing(jobId, { hashPlan: true, error: failure });
    if (failure === undefined)
      await this.shared.prune(jobId, isTerminal(outcome.job.status), this.scope.held.get(jobId));
    if (outcome.execution && outcome.execution.ticketId === executedBefore) delete outcome.execution;
    return outcome;
  }

  private requireModel(): void {
    if (!this.deps.provider) {
      throw new AgentError(
        'CONFIG_INVALID',
        'Jobs need a language model and none is configured.',
        'Set a Gemini API key (or GEMINI_API_KEY), or an OpenAI-compatible endpoint.',
      );
    }
  }
}

/** The first line of the task, cut at a word boundary near 60 characters. */
export function titleOf(task: string): string {
  const line = task.split('\n')[0]?.trim() ?? task;
  if (line.length <= 60) return line;
  const cut = line.slice(0, 60);
  const space = cut.lastIndexOf(' ');
  return `${space > 30 ? cut.slice(0, space) : cut}…`;
}

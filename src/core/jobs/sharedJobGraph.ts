/**
 * What the steps of one long-lived JobRunner share: the job graph, compiled once, its checkpointer (and that
 * checkpointer's retention) and the leases. The graph's nodes read the step's own database, model, progress
 * and Cancel (JobStepDeps) from the step they run in (AsyncLocalStorage, like LangGraph's own config), so two
 * jobs stepping at once in one window each see their own; outside a step they see the runner's.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { dirname, join } from 'node:path';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { FileCheckpointSaver } from '../ask/fileCheckpointer';
import { jobAuditLog } from './jobAudit';
import type { JobLease } from './jobLease';
import { JobLeases } from './jobLease';
import type { JobRunnerDeps } from './jobRunnerDeps';
import { FileLeaseBackend } from './leaseBackends';
import { guardCheckpointer, guardJobStore } from './leaseGuards';
import type { JobGraph } from './phases/jobGraph';
import { buildJobGraph } from './phases/jobGraph';
import type { ClaimAuthorizer, JobGraphDeps } from './phases/jobGraphDeps';
import { authorizeAtClaim } from '../approvals/policyInForce';
import type { PlanningSettings } from './planningSettings';

/** A step in flight: its deps (the runner's, with the step's own database, model and progress) and the leases it holds. */
export interface StepScope {
  deps: JobRunnerDeps;
  /** The leases this step holds now, by job: every write of job state checks its own first. */
  held: Map<string, JobLease>;
  /** The policy in force the runner read for this step's claim of `ticketId`: the graph's claim uses it (read once). */
  authorized?: { ticketId: string; authorize: ClaimAuthorizer };
}

/** The policy in force for a claim by `deps`' database, read now. */
export function readClaimAuthorizer(deps: JobRunnerDeps): Promise<ClaimAuthorizer> {
  return deps.db.withSession((session) =>
    authorizeAtClaim(session, { ...deps.settings, connection: deps.connectionKey }),
  );
}

const inStep = new AsyncLocalStorage<StepScope>();

export class SharedJobGraph {
  readonly leases: JobLeases;
  private compiled: JobGraph | undefined;
  /** The checkpoint files of this workspace, when the checkpointer is the file one (the team database keeps its own). */
  private fileSaver: FileCheckpointSaver | undefined;

  constructor(
    private readonly base: JobRunnerDeps,
    private readonly planning: PlanningSettings,
  ) {
    this.leases =
      base.leases ??
      new JobLeases(new FileLeaseBackend(join(dirname(base.store.root), 'leases')), {
        by: 'pg-agent',
        logger: base.logger,
      });
  }

  /** Runs `body` as `scope`'s: the graph's nodes, store writes and checkpoint writes inside it are the step's. */
  within<T>(scope: StepScope, body: () => Promise<T>): Promise<T> {
    return inStep.run(scope, body);
  }

  graph(): JobGraph {
    this.compiled ??= this.build();
    return this.compiled;
  }

  /** Checkpoint retention (FileCheckpointSaver.prune), by the step that still holds the lease; the team database keeps its own. */
  async prune(jobId: string, finished: boolean, lease: JobLease | undefined): Promise<void> {
    this.graph();
    if (!this.fileSaver) return;
    try {
      await lease?.assertHeld();
      const { before, after } = this.fileSaver.prune(jobId, { finished });
      if (after < before) this.base.logger.debug('job checkpoints pruned', { jobId, before, after });
    } catch (error) {
      this.base.logger.warn('could not prune the job checkpoints; they stay as they are', {
        jobId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  private build(): JobGraph {
    const base = this.base;
    const step = (): JobRunnerDeps => inStep.getStore()?.deps ?? base;
    const guard = (jobId: string) => inStep.getStore()?.held.get(jobId)?.assertHeld() ?? Promise.resolve();
    const audit = jobAuditLog(base.store);
    const deps: JobGraphDeps = {
      store: guardJobStore(base.store, guard),
      ticketStore: base.ticketStore,
      settings: base.settings,
      logger: base.logger,
      requestedBy: base.requestedBy,
      planning: this.planning,
      modelTimeoutMs: base.modelTimeoutMs ?? 60_000,
      maxModelCallsPerPhase: base.maxModelCallsPerPhase ?? 40,
      audit: (jobId, event) => audit.recordJob(jobId, event),
      now: () => new Date(),
      // The step's own: read when a node uses them, inside the step that runs it.
      get db() {
        return step().db;
      },
      get connectionKey() {
        return step().connectionKey;
      },
      get provider() {
        return step().provider;
      },
      get loadSnapshot() {
        return step().loadSnapshot;
      },
      get signal() {
        return step().signal;
      },
      get indexForSearch() {
        return step().indexForSearch;
      },
      emit: (event) => step().onEvent?.(event),
      authorizeClaim: (ticketId) => {
        const scope = inStep.getStore();
        const carried = scope?.authorized;
        if (scope && carried?.ticketId === ticketId) {
          scope.authorized = undefined;
          return Promise.resolve(carried.authorize);
        }
        return readClaimAuthorizer(step());
      },
    };
    return buildJobGraph(deps, guardCheckpointer(this.checkpointer(), guard));
  }

  /**
   * The jobs' checkpointer, remembered when it is the file one — whether the CLI or VS Code passed it in or it is
   * made here — so that its retention runs for every real job.
   */
  private checkpointer(): BaseCheckpointSaver {
    const saver = this.base.checkpointer ?? new FileCheckpointSaver(this.base.checkpointsDir);
    this.fileSaver = saver instanceof FileCheckpointSaver ? saver : undefined;
    return saver;
  }
}

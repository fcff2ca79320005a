/**
 * JobRunners for the host, built per action from the window's state: the active database, the ticket
 * store SqlReview uses, the configured model, the safety and planning settings. A "viewer" runner only
 * reads where a job stands, so it is given no database at all.
 */
import * as vscode from 'vscode';
import { userInfo } from 'node:os';
import type { Db } from '../../core/db/db';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { JobLeases } from '../../core/jobs/jobLease';
import type { JobRunner, JobRunnerDeps } from '../../core/jobs/jobRunner';
import type { JobStore } from '../../core/jobs/jobStore';
import type { JobEvent } from '../../core/jobs/jobOutcome';
import type { Embedder } from '../../core/llm/embeddings';
import type { LlmProvider } from '../../core/llm/provider';
import type { Logger } from '../../core/platform/logger';
import type { DatabaseSession } from '../connection/databaseSession';
import type { CoreServices } from '../lazyServices';
import { coreServices } from '../lazyServices';
import { withSignal } from '../settings/modelProvider';
import { planningSettings, redisUrl, safetySettings } from '../settings/settings';
import type { SqlReview } from '../sqlApproval/sqlReview';

export interface JobRunnersDeps {
  session: DatabaseSession;
  review: SqlReview;
  logger: Logger;
  rootDir: string;
}

export interface ActionRunnerOptions {
  provider: LlmProvider | undefined;
  /** The embedding model, when configured (the job is indexed for vector_search at phase boundaries). */
  embedder?: Embedder;
  signal: AbortSignal;
  onEvent(event: JobEvent): void;
}

/** Who the job records as the person acting (tickets, reviews). */
export function actor(): string {
  return userInfo().username;
}

export class JobRunners implements vscode.Disposable {
  private jobStore: JobStore | undefined;
  private leaseBackend: ReturnType<CoreServices['openLeaseBackend']> | undefined;
  private checkpointer: { url: string; opened: ReturnType<CoreServices['openJobCheckpointer']> } | undefined;

  constructor(private readonly deps: JobRunnersDeps) {}

  /** One driver per job, shared with the CLI: the same Redis URL decides where leases live for both. */
  private async leases(): Promise<JobLeases> {
    const services = coreServices();
    this.leaseBackend ??= services.openLeaseBackend({ redisUrl: redisUrl(), leasesDir: services.workspacePaths(this.deps.rootDir).leases, logger: this.deps.logger });
    const opened = await this.leaseBackend.catch((error: unknown) => {
      this.leaseBackend = undefined; // Redis down now: try again on the next action
      throw error;
    });
    return new services.JobLeases(opened.backend, { by: `VS Code (${vscode.env.appName})`, logger: this.deps.logger });
  }

  /** Team mode (team.databaseUrl of .pgagent/config.json, else postgresAgent.team.databaseUrl): checkpoints in that database. */
  private async jobCheckpointer(): Promise<BaseCheckpointSaver> {
    const services = coreServices();
    const paths = services.workspacePaths(this.deps.rootDir);
    const config = await services.readWorkspaceConfig(paths);
    const url = config.team?.databaseUrl?.trim() || vscode.workspace.getConfiguration('postgresAgent').get<string>('team.databaseUrl')?.trim() || '';
    if (this.checkpointer?.url !== url) {
      void this.checkpointer?.opened.then((c) => c.close(), () => undefined);
      this.checkpointer = { url, opened: services.openJobCheckpointer({ teamDatabaseUrl: url, checkpointsDir: paths.checkpoints, logger: this.deps.logger }) };
    }
    const current = this.checkpointer;
    const opened = await current.opened.catch((error: unknown) => {
      if (this.checkpointer === current) this.checkpointer = undefined; // team database down now: try again next time
      throw error;
    });
    return opened.saver;
  }

  dispose(): void {
    void this.leaseBackend?.then((opened) => opened.close(), () => undefined);
    this.leaseBackend = undefined;
    void this.checkpointer?.opened.then((c) => c.close(), () => undefined);
    this.checkpointer = undefined;
  }

  /** The workspace's job folders (created on first use: activation loads no core). */
  store(): JobStore {
    this.jobStore ??= new (coreServices().JobStore)(this.deps.rootDir, { logger: this.deps.logger });
    return this.jobStore;
  }

  /**
   * Runs `work` with a runner for one action on `jobConnection`'s database: refuses when the window has
   * another database open, since the job's tickets and plan are bound to the one it was planned on. The
   * database stays open until `work` ends, even if the window switches to another one meanwhile.
   */
  withAction<T>(jobConnection: string | undefined, options: ActionRunnerOptions, work: (runner: JobRunner) => Promise<T>): Promise<T> {
    return this.deps.session.use(async ({ db, key }) => {
      const services = coreServices();
      if (jobConnection !== undefined && jobConnection !== key) {
        throw new services.AgentError(
          'BAD_INPUT',
          `This job works on another database (${jobConnection}) than the one open in this window (${key}).`,
          'Select the job\'s connection with "Postgres Agent: Select Connection…", then try again.',
        );
      }
      const runner = new services.JobRunner({
        ...(await this.common(db, key)),
        provider: options.provider ? withSignal(options.provider, options.signal) : undefined,
        loadSnapshot: () => this.deps.session.loadSnapshot(),
        invalidateSchema: () => this.deps.session.invalidateSchema(),
        onEvent: (event) => options.onEvent(event),
        signal: options.signal,
        ...(options.embedder ? { embedder: options.embedder } : {}),
      });
      return work(runner);
    });
  }

  /** A runner that only reads where jobs stand (outcome): no model, and a database that refuses every query. */
  async viewer(): Promise<JobRunner> {
    const services = coreServices();
    const db = offlineDb();
    return new services.JobRunner({
      ...(await this.common(db, 'offline')),
      provider: undefined,
      loadSnapshot: () => Promise.reject(notOpen()),
    });
  }

  private async common(db: Db, key: string): Promise<Omit<JobRunnerDeps, 'provider' | 'loadSnapshot'>> {
    const services = coreServices();
    const config = vscode.workspace.getConfiguration('postgresAgent');
    return {
      store: this.store(),
      checkpointsDir: services.workspacePaths(this.deps.rootDir).checkpoints,
      db,
      connectionKey: key,
      ticketStore: await this.deps.review.ticketStore(),
      settings: await safetySettings(this.deps.rootDir),
      logger: this.deps.logger,
      requestedBy: actor(),
      planning: await planningSettings(this.deps.rootDir),
      modelTimeoutMs: config.get<number>('model.timeoutMs') ?? 60_000,
      leases: await this.leases(),
      checkpointer: await this.jobCheckpointer(),
    };
  }
}

function notOpen(): Error {
  const services = coreServices();
  return new services.AgentError('INTERNAL', 'Reading where a job stands needs no database, but the job runner asked for one.');
}

/** A Db that refuses every query: what a runner gets when it must only read job files. */
function offlineDb(): Db {
  const refuse = () => Promise.reject(notOpen());
  return {
    kind: 'postgres',
    label: 'none (reading job files only)',
    query: refuse,
    queryText: refuse,
    withSession: refuse,
    close: () => Promise.resolve(),
  };
}

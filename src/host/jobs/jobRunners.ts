/**
 * The window's job runner (issue 23: one runner per window). One core JobRunner is kept for the window —
 * its graph compiled once — and rebuilt only when what it is built from changes: the settings in force, the
 * ticket store, the team checkpointer or the lease store. Each step reads the settings once (one read of
 * .pgagent/config.json and of the person's own config file) and binds the runner to its database, model and
 * progress (`JobRunner.forStep`). Reading where jobs stand (`viewer`) reuses the runner and reads nothing else.
 * Host-pure (no vscode import): VS Code's parts come in as ports, so tests drive this in node.
 */
import { userInfo } from 'node:os';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { Db } from '../../core/db/db';
import type { JobLeases } from '../../core/jobs/jobLease';
import type { JobRunner } from '../../core/jobs/jobRunner';
import type { JobEvent } from '../../core/jobs/jobOutcome';
import type { JobStore } from '../../core/jobs/jobStore';
import type { PlanningSettings } from '../../core/jobs/planningSettings';
import type { Embedder } from '../../core/llm/embeddings';
import type { LlmProvider } from '../../core/llm/provider';
import type { AgentError } from '../../core/platform/errors';
import type { Logger } from '../../core/platform/logger';
import type { SafetySettings } from '../../core/sql/safetySettings';
import type { SchemaSnapshot } from '../../shared/schema';
import type { CoreServices } from '../lazyServices';

/** The settings a job runner is built from, resolved from one read of each config file. */
export interface JobRunnerSettings {
  safety: SafetySettings;
  planning: PlanningSettings;
  /** Team mode's checkpoint database ('' = checkpoint files). */
  teamDatabaseUrl: string;
  modelTimeoutMs: number;
  /** Where job leases live (Redis when set, shared with the CLI). */
  redisUrl: string | undefined;
}

/** The open database of the window (DatabaseSession). */
export interface JobDatabasePort {
  use<T>(work: (open: { db: Db; key: string }) => Promise<T>): Promise<T>;
  loadSnapshot(): Promise<SchemaSnapshot>;
}

/** The core's job runner, stores and leases, loaded when called (host/compose/jobsPort.ts). */
export interface JobRunnersPort extends Pick<
  CoreServices,
  'jobSearchIndexer' | 'workspacePaths' | 'openLeaseBackend' | 'openJobCheckpointer'
> {
  jobStore(...args: ConstructorParameters<CoreServices['JobStore']>): JobStore;
  jobRunner(...args: ConstructorParameters<CoreServices['JobRunner']>): JobRunner;
  jobLeases(...args: ConstructorParameters<CoreServices['JobLeases']>): JobLeases;
  error(...args: ConstructorParameters<typeof AgentError>): AgentError;
}

export interface JobRunnersDeps {
  port: JobRunnersPort;
  rootDir: string;
  logger: Logger;
  session: JobDatabasePort;
  /** The window's ticket store (the one the inline approval uses). */
  ticketStore(): Promise<TicketStore>;
  /** The settings in force now (VS Code: host/jobs/jobSettings.ts). */
  settings(): Promise<JobRunnerSettings>;
  /** Who holds a job's lease, as another driver is told ("VS Code (Visual Studio Code)"); asked on first use. */
  driverName(): string;
}

export interface ActionRunnerOptions {
  /** Already bound to the step's signal (the model call in flight stops with it). */
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

interface Built {
  runner: JobRunner;
  /** What it was built from: a step that finds any of these changed builds a new one. */
  key: string;
  ticketStore: TicketStore;
  checkpointer: BaseCheckpointSaver;
  leases: JobLeases;
}

export class JobRunners {
  private jobStore: JobStore | undefined;
  private leaseBackend:
    { url: string | undefined; opened: ReturnType<CoreServices['openLeaseBackend']>; leases?: JobLeases } | undefined;
  private checkpointer: { url: string; opened: ReturnType<CoreServices['openJobCheckpointer']> } | undefined;
  private built: Promise<Built> | undefined;
  /** How many times the window's runner was built (for the log and the tests: once until the settings change). */
  private builds = 0;
  /** A settings change event came (VS Code settings, a config file): the next read of where jobs stand checks too. */
  private stale = false;

  constructor(private readonly deps: JobRunnersDeps) {}

  buildCount(): number {
    return this.builds;
  }

  /** The settings may have changed (a settings change event): the next use reads them (a step always does). */
  settingsChanged(): void {
    this.stale = true;
  }

  /** The workspace's job folders (created on first use: activation loads no core). */
  store(): JobStore {
    this.jobStore ??= this.deps.port.jobStore(this.deps.rootDir, { logger: this.deps.logger });
    return this.jobStore;
  }

  /**
   * Runs `work` with the window's runner bound to one action on `jobConnection`'s database: refuses when the
   * window has another database open, since the job's tickets and plan are bound to the one it was planned on.
   * The database stays open until `work` ends, even if the window switches to another one meanwhile.
   */
  withAction<T>(
    jobConnection: string | undefined,
    options: ActionRunnerOptions,
    work: (runner: JobRunner) => Promise<T>,
  ): Promise<T> {
    return this.deps.session.use(async ({ db, key }) => {
      const port = this.deps.port;
      if (jobConnection !== undefined && jobConnection !== key) {
        throw port.error(
          'BAD_INPUT',
          `This job works on another database (${jobConnection}) than the one open in this window (${key}).`,
          'Select the job\'s connection with "Postgres Agent: Select Connection…", then try again.',
        );
      }
      const runner = await this.current(true);
      return work(
        runner.forStep({
          db,
          connectionKey: key,
          provider: options.provider,
          loadSnapshot: () => this.deps.session.loadSnapshot(),
          onEvent: (event) => options.onEvent(event),
          signal: options.signal,
          ...(options.embedder ? { indexForSearch: port.jobSearchIndexer(options.embedder, this.deps.logger) } : {}),
        }),
      );
    });
  }

  /**
   * The window's runner as it is, for reading where jobs stand (outcome) and pausing: no model, and a database
   * that refuses every query. Reads the settings only when no step built it yet or a settings change event came.
   */
  viewer(): Promise<JobRunner> {
    return this.current(false);
  }

  /** The runner; `check`: read the settings now (once) and rebuild it when they or its stores changed. */
  private async current(check: boolean): Promise<JobRunner> {
    const previous = this.built;
    if (previous && !check && !this.stale) {
      const ready = await previous.catch(() => undefined);
      if (ready) return ready.runner;
    }
    const next = this.rebuildIfChanged(previous);
    this.built = next;
    try {
      return (await next).runner;
    } catch (error) {
      if (this.built === next) this.built = undefined; // the next action tries again
      throw error;
    }
  }

  private async rebuildIfChanged(previous: Promise<Built> | undefined): Promise<Built> {
    this.stale = false;
    const settings = await this.deps.settings();
    const [ticketStore, checkpointer, leases] = await Promise.all([
      this.deps.ticketStore(),
      this.jobCheckpointer(settings.teamDatabaseUrl),
      this.leases(settings.redisUrl),
    ]);
    const key = JSON.stringify({
      safety: settings.safety,
      planning: settings.planning,
      modelTimeoutMs: settings.modelTimeoutMs,
    });
    const before = await previous?.catch(() => undefined);
    if (
      before &&
      before.key === key &&
      before.ticketStore === ticketStore &&
      before.checkpointer === checkpointer &&
      before.leases === leases
    )
      return before;
    const port = this.deps.port;
    const runner = port.jobRunner({
      store: this.store(),
      checkpointsDir: port.workspacePaths(this.deps.rootDir).checkpoints,
      db: offlineDb(port),
      connectionKey: 'offline',
      provider: undefined,
      loadSnapshot: () => Promise.reject(notOpen(port)),
      ticketStore,
      settings: settings.safety,
      logger: this.deps.logger,
      requestedBy: actor(),
      planning: settings.planning,
      modelTimeoutMs: settings.modelTimeoutMs,
      leases,
      checkpointer,
    });
    this.builds += 1;
    this.deps.logger.debug(
      before ? 'job runner rebuilt: its settings or stores changed' : 'job runner built for this window',
      { builds: this.builds },
    );
    return { runner, key, ticketStore, checkpointer, leases };
  }

  /** One driver per job, shared with the CLI: the same Redis URL decides where leases live for both. */
  private async leases(redisUrl: string | undefined): Promise<JobLeases> {
    const port = this.deps.port;
    if (!this.leaseBackend || this.leaseBackend.url !== redisUrl) {
      void this.leaseBackend?.opened.then(
        (opened) => opened.close(),
        () => undefined,
      );
      this.leaseBackend = {
        url: redisUrl,
        opened: port.openLeaseBackend({
          redisUrl,
          leasesDir: port.workspacePaths(this.deps.rootDir).leases,
          logger: this.deps.logger,
        }),
      };
    }
    const current = this.leaseBackend;
    const opened = await current.opened.catch((error: unknown) => {
      if (this.leaseBackend === current) this.leaseBackend = undefined; // Redis down now: try again on the next action
      throw error;
    });
    current.leases ??= port.jobLeases(opened.backend, { by: this.deps.driverName(), logger: this.deps.logger });
    return current.leases;
  }

  /** Team mode (team.databaseUrl of .pgagent/config.json, else postgresAgent.team.databaseUrl): checkpoints in that database. */
  private async jobCheckpointer(url: string): Promise<BaseCheckpointSaver> {
    if (this.checkpointer?.url !== url) {
      void this.checkpointer?.opened.then(
        (c) => c.close(),
        () => undefined,
      );
      const port = this.deps.port;
      this.checkpointer = {
        url,
        opened: port.openJobCheckpointer({
          teamDatabaseUrl: url,
          checkpointsDir: port.workspacePaths(this.deps.rootDir).checkpoints,
          logger: this.deps.logger,
        }),
      };
    }
    const current = this.checkpointer;
    const opened = await current.opened.catch((error: unknown) => {
      if (this.checkpointer === current) this.checkpointer = undefined; // team database down now: try again next time
      throw error;
    });
    return opened.saver;
  }

  dispose(): void {
    void this.leaseBackend?.opened.then(
      (opened) => opened.close(),
      () => undefined,
    );
    this.leaseBackend = undefined;
    void this.checkpointer?.opened.then(
      (c) => c.close(),
      () => undefined,
    );
    this.checkpointer = undefined;
    this.built = undefined;
  }
}

function notOpen(port: JobRunnersPort): Error {
  return port.error('INTERNAL', 'Reading where a job stands needs no database, but the job runner asked for one.');
}

/** A Db that refuses every query: what the window's runner has outside a step, which only reads job files. */
function offlineDb(port: JobRunnersPort): Db {
  const refuse = () => Promise.reject(notOpen(port));
  return {
    kind: 'postgres',
    label: 'none (reading job files only)',
    query: refuse,
    queryText: refuse,
    withSession: refuse,
    close: () => Promise.resolve(),
  };
}

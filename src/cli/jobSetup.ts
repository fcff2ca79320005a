/**
 * What `pg-agent job` needs around the core JobRunner: the settings of the action from one read of the config
 * files, the model from the environment, a runner that touches the database only when the action runs the job.
 */
import type { Db } from '../core/db/db';
import { AgentError } from '../core/platform/errors';
import type { Job } from '../core/jobs/job';
import type { JobEvent } from '../core/jobs/jobOutcome';
import type { PlanningSettings } from '../core/jobs/planningSettings';
import { JobRunner } from '../core/jobs/jobRunner';
import { jobSearchIndexer } from '../core/review/jobSearchIndex';
import { DEFAULT_PLANNING } from '../core/jobs/planningSettings';
import { JobStore } from '../core/jobs/jobStore';
import type { LlmProvider } from '../core/llm/provider';
import { workspacePaths } from '../core/config/workspace';
import type { Resolved } from '../core/settings/workspacePolicy';
import { planningInForce } from '../core/settings/workspacePolicy';
import { readConfigFiles } from '../core/settings/settingsInForce';
import type { Env } from '../core/db/connectionTarget';
import { ownConfigFile } from '../core/config/ownConfig';
import { historyFor } from '../core/sql/history/historyFor';
import type { SafetySettings } from '../core/sql/safetySettings';
import type { CommonFlags } from './args';
import type { CommandContext } from './command';
import { EXIT } from './exitCodes';
import type { ExitCode } from './exitCodes';
import { embedderFromEnv, providerFromEnv } from './modelsFromEnv';
import { requesterOf } from './decider';
import { cliSafetyInForce, printWarnings } from './sqlInput';

/**
 * The settings of one `pg-agent job` action from ONE read of the person's own config file and .pgagent/config.json:
 * safety as every command resolves it (`cliSafetyInForce`: flags and own config, the workspace only tightening)
 * and planning (`planningInForce`, the CLI's counterpart of postgresAgent.planning.*: a workspace cannot turn the
 * plan review off). A claim still reads the policy afresh: a command that prompts at the terminal decides later
 * than it read these.
 */
export async function readJobSettings(
  flags: CommonFlags,
  env: Env,
): Promise<Resolved<{ safety: SafetySettings; planning: PlanningSettings }>> {
  const read = await readConfigFiles(ownConfigFile(env), flags.workspace);
  const workspace = read.workspace ?? { connections: [] };
  const safety = cliSafetyInForce(flags, workspace, read.own, env);
  const files = { workspace: workspacePaths(flags.workspace).config, own: ownConfigFile(env) };
  const planning = planningInForce(DEFAULT_PLANNING, read.own, [{ config: workspace, files }]);
  return {
    settings: {
      safety: safety.settings,
      planning: planning.settings,
    },
    warnings: [...safety.warnings, ...planning.warnings],
  };
}

/** The person acting (tickets, reviews, cancellations). */
export function actorOf(context: CommandContext): string {
  const by = context.args.options.by;
  return (typeof by === 'string' && by.trim()) || context.io.env.USER?.trim() || 'cli-user';
}

/** The model of `--model` and the environment, as `pg-agent ask` finds it; undefined when none is configured. */
export function jobProvider(context: CommandContext): LlmProvider | undefined {
  const model = context.args.options.model;
  return providerFromEnv(context.io.env, typeof model === 'string' ? model : undefined, context.logger);
}

export const NO_MODEL_MESSAGE = 'pg-agent job needs a language model to plan, run and chat, and none is configured.';
export const NO_MODEL_ADVICE =
  'Set GEMINI_API_KEY (keys: https://aistudio.google.com/apikey), or OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1) with --model and, if needed, OPENAI_API_KEY.';

/** One read per command: a command that shows a job and then runs it builds two runners, from one read. */
const readByCommand = new WeakMap<CommandContext, ReturnType<typeof readJobSettings>>();

function commandJobSettings(context: CommandContext): ReturnType<typeof readJobSettings> {
  let read = readByCommand.get(context);
  if (read === undefined) {
    read = readJobSettings(context.args.flags, context.io.env).then((resolved) => {
      printWarnings(context.io, resolved.warnings);
      return resolved;
    });
    readByCommand.set(context, read);
  }
  return read;
}

export interface RunnerOptions {
  /** The action runs the job (model calls, reads, writes): open the database named by the flags. */
  runs: boolean;
  provider: LlmProvider | undefined;
  /** The job being acted on: a running action refuses another database than the one it was planned on. */
  job?: Job;
}

/**
 * A JobRunner for one action. Actions that only read where a job stands, or cancel it, get a database
 * that refuses every query, so `show` never starts the embedded sample database or connects anywhere.
 */
export async function buildRunner(context: CommandContext, options: RunnerOptions): Promise<JobRunner> {
  const { args } = context;
  const workspace = args.flags.workspace;
  const resolved = await commandJobSettings(context);
  const { planning } = resolved.settings;
  const settings: SafetySettings = {
    ...resolved.settings.safety,
    policySources: { ...resolved.settings.safety.policySources, logger: context.logger },
    history: historyFor(workspacePaths(workspace).history, 'cli'),
  };
  const common = {
    store: new JobStore(workspace, { logger: context.logger }),
    checkpointsDir: workspacePaths(workspace).checkpoints,
    ticketStore: await context.openTicketStore(),
    logger: context.logger,
    requestedBy: await requesterOf(context),
    planning,
    onEvent: (event: JobEvent) => progress(context, event),
    leases: await context.openJobLeases(),
    checkpointer: (await context.openJobCheckpointer()).saver,
  };
  if (!options.runs) {
    return new JobRunner({
      ...common,
      db: offlineDb(),
      connectionKey: options.job?.connection ?? 'offline',
      provider: options.provider,
      loadSnapshot: () => Promise.reject(offline()),
      settings,
    });
  }
  const key = await context.connectionKey();
  if (options.job && options.job.connection !== key) throw otherDatabase(options.job, key);
  const embedder = embedderFromEnv(context.io.env, context.logger);
  return new JobRunner({
    ...common,
    db: await context.openDb(),
    connectionKey: key,
    provider: options.provider,
    loadSnapshot: () => context.loadSchema(),
    settings,
    ...(embedder ? { indexForSearch: jobSearchIndexer(embedder, context.logger) } : {}),
  });
}

/** The job's tickets and plan are bound to the database it was planned on. */
export function otherDatabase(job: Job, key: string): AgentError {
  return new AgentError(
    'BAD_INPUT',
    `Job ${job.id} works on ${job.connection}, not on ${key}.`,
    "Pass the job's database with --db URL (or --connection NAME), as when it was created.",
  );
}

/** Progress on stderr, so stdout stays the plan, the result or the JSON object. */
function progress(context: CommandContext, event: JobEvent): void {
  switch (event.type) {
    case 'status':
      context.io.stderr(`[${event.jobId}] ${event.status}\n`);
      return;
    case 'step':
      context.io.stderr(`[${event.jobId}] ${event.phase}: ${event.message}\n`);
      return;
    case 'files':
      return;
    default: {
      const unexpected: never = event;
      context.logger.debug('unknown job event', { event: JSON.stringify(unexpected) });
    }
  }
}

function offline(): AgentError {
  return new AgentError(
    'INTERNAL',
    'This pg-agent job action reads job files only, but the job runner asked for the database.',
  );
}

function offlineDb(): Db {
  const refuse = () => Promise.reject(offline());
  return {
    kind: 'postgres',
    label: 'none (reading job files only)',
    query: refuse,
    queryText: refuse,
    withSession: refuse,
    close: () => Promise.resolve(),
  };
}

/**
 * "No model configured" for pg-agent job and plan: exit 1 with advice, as pg-agent ask does (the person's
 * setup, not their input); with --json also the error object scripts read.
 */
export function noModel(context: CommandContext, error: AgentError): ExitCode {
  if (context.args.flags.json) {
    context.io.stdout(
      `${JSON.stringify({ status: 'error', statements: [], fields: [], rows: [], rowCount: 0, truncated: false, error: error.toInfo() })}\n`,
    );
  }
  context.io.stderr(`error: ${error.message}\n  ${error.advice ?? ''}\n`);
  return EXIT.failed;
}

/**
 * `pg-agent plan`: collaborative planning with several models (seed 003). Rounds of analysis by two
 * analysts, cross-verified with each other and against the database, until they converge or the person must
 * decide; then IMPL_PLAN.md + plan.json, and a job from it. Every step works from .pgagent/collab/<id>/, so
 * each can run in a new process; on a terminal the decision points are prompts, otherwise exit 3.
 */
import { CollabSessionRunner, DEFAULT_MAX_ROUNDS } from '../../core/collab/collabSession';
import type { SessionDecision } from '../../core/collab/sessionDecision';
import type { ModelSpec } from '../../core/collab/collabModels';
import { parseModelList, specLabel } from '../../core/collab/collabModels';
import { executeAsJob } from '../../core/collab/executeAsJob';
import { CollabStore } from '../../core/collab/sessionStore';
import { assertSessionId } from '../../core/collab/sessionTypes';
import type { SessionState } from '../../core/collab/sessionTypes';
import { readSessionView } from '../../core/collab/sessionView';
import { AgentError, toAgentError } from '../../core/platform/errors';
import type { JobOutcome } from '../../core/jobs/jobOutcome';
import { createProvider } from '../../core/llm/createProvider';
import type { LlmProvider } from '../../core/llm/provider';
import type { CliCommand, CommandContext } from '../command';
import { EXIT } from '../exitCodes';
import type { ExitCode } from '../exitCodes';
import { columns } from '../../core/present/format';
import { actorOf, buildRunner, noModel } from '../jobSetup';
import { renderSession, sessionJson } from '../planReport';
import { cliSafety } from '../sqlInput';
import { providerFromEnv } from '../modelsFromEnv';
import { visibleText } from '../../shared/visibleSql';

const SUBCOMMANDS = ['new', 'list', 'show', 'decide', 'execute'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

export const planCommand: CliCommand = {
  name: 'plan',
  summary:
    'collaborative planning with several models: rounds, cross-verification against the database, options, IMPL_PLAN.md',
  usage: `pg-agent plan [new] [--max-rounds N] [--models LIST] [flags] [--] <task | ->
       pg-agent plan list
       pg-agent plan show <id>
       pg-agent plan decide <id> (--option N | --clarify TEXT | --redirect TEXT | --more)
       pg-agent plan execute <id>`,
  options: {
    'max-rounds': { type: 'string' },
    models: { type: 'string' },
    model: { type: 'string' },
    option: { type: 'string' },
    clarify: { type: 'string' },
    redirect: { type: 'string' },
    more: { type: 'boolean' },
  },
  optionsHelp: `  --max-rounds N      automatic rounds before a decision is asked (default ${DEFAULT_MAX_ROUNDS}; counted again after each decision)
  --models LIST       provider:model pairs in fallback order, e.g. gemini:gemini-2.5-pro,openai:qwen2.5-coder
                      (gemini needs GEMINI_API_KEY; openai = the endpoint at OPENAI_BASE_URL, OPENAI_API_KEY if needed).
                      Default: the one model of pg-agent ask (two perspectives of the same model)
  --model M           without --models: that one model's name
  --option N          decide: choose option N of the last round; writes IMPL_PLAN.md and plan.json
  --clarify TEXT      decide: answer the questions / add constraints; another round ("-" reads stdin)
  --redirect TEXT     decide: change direction; earlier rounds are kept but the analysis starts over
  --more              decide: another round as is (also goes on after an interrupted round)`,
  description: `  new      gather the database context (ranked schema, sizes, indexes, FK paths, activity, EXPLAIN of
           queries in the task), then run rounds until the analysts converge (score ≥ 0.8), disagree on more
           than 3 points (your input is asked), or --max-rounds is reached
  list     the sessions of the workspace, newest first
  show     rounds, analyses, agreements/disagreements, refuted SQL, options with trade-offs, questions, usage
  decide   a decision at a decision point (recorded with who and when)
  execute  hand plan.json to a job: plan.md/todos.yaml from the plan, the job waits at its plan review
           (pg-agent job approve <job>); every write still waits for its own approval ticket

Every proposed SQL is parsed, EXPLAINed read-only or previewed (rolled back) — never committed.
Exit codes: 0 done (planned, executed, show, list) · 1 run-time failure (model, database; the session keeps
its state, pg-agent plan decide <id> --more goes on), or no model configured (as pg-agent ask and job) ·
2 bad input · 3 a decision is needed and nobody can answer here (--no-input, --json or no terminal): the output
names the session and what is asked.
--json prints one object with id, phase, asked, rounds, latest (analyses, cross_verification, refuted,
solutions, convergence, clarification_questions), plan, implPlan, jobId, usage; list: {sessions}.`,
  async run(context) {
    const [action, ...rest] = context.args.positionals;
    if (action === undefined)
      throw new AgentError(
        'BAD_INPUT',
        'pg-agent plan needs a subcommand.',
        `Use one of ${SUBCOMMANDS.join(', ')}; see pg-agent plan --help.`,
      );
    if (!(SUBCOMMANDS as readonly string[]).includes(action)) {
      // SPEC §6's short form `pg-agent plan "<task>"`: a task is several words; one unknown word is a mistyped subcommand.
      if (rest.length > 0 || /\s/.test(action.trim())) return ACTIONS.new(context, [action, ...rest]);
      throw new AgentError(
        'BAD_INPUT',
        `Unknown plan subcommand "${action}".`,
        `Use one of ${SUBCOMMANDS.join(', ')}; e.g. pg-agent plan new -- "<task>".`,
      );
    }
    return ACTIONS[action as Subcommand](context, rest);
  },
};

type Action = (context: CommandContext, rest: string[]) => Promise<ExitCode>;

const ACTIONS: Record<Subcommand, Action> = {
  async new(context, rest) {
    const raw = rest.join(' ');
    const task = (raw === '-' ? await context.io.readStdin() : raw).trim();
    if (task === '')
      throw new AgentError(
        'BAD_INPUT',
        'The task is empty.',
        'Describe it after the flags, e.g. pg-agent plan new -- "archive orders older than two years", or "-" to read stdin.',
      );
    rejectNul(task, 'task');
    const maxRounds = maxRoundsOf(context);
    let created: string | undefined;
    const runner = await sessionRunner(context, undefined, (id) => {
      created = id;
    });
    if (!runner) return noModel(context, planNoModel());
    try {
      const state = await runner.start({
        task,
        by: actorOf(context),
        ...(maxRounds !== undefined ? { maxRounds } : {}),
      });
      return await finish(context, runner, state);
    } catch (error) {
      return failed(context, created, error);
    }
  },

  async list(context, rest) {
    if (rest.length > 0) throw new AgentError('BAD_INPUT', `Unexpected arguments: ${rest.join(' ')}.`);
    const sessions = await store(context).list();
    const { io } = context;
    if (context.args.flags.json) {
      io.stdout(
        `${JSON.stringify({ sessions: sessions.map((s) => ({ id: s.id, phase: s.phase, task: s.task, currentRound: s.currentRound, models: s.models, jobId: s.jobId, createdAt: s.createdAt, updatedAt: s.updatedAt })) })}\n`,
      );
    } else if (sessions.length === 0)
      io.stdout('No planning sessions. Start one with: pg-agent plan new -- "<task>"\n');
    else
      io.stdout(
        `${visibleText(columns(sessions.map((s) => [s.id, s.phase, `round ${s.currentRound}`, s.updatedAt, s.task.split('\n')[0]?.slice(0, 60) ?? ''])))}\n`,
      );
    return EXIT.ok;
  },

  async show(context, rest) {
    const id = sessionIdOf(rest);
    const view = await readSessionView(store(context), id);
    print(context, view);
    return EXIT.ok;
  },

  async decide(context, rest) {
    const id = sessionIdOf(rest);
    const decision = await decisionOf(context);
    // The session's own models unless --models names others.
    const runner = await sessionRunner(context, (await store(context).get(id)).models);
    if (!runner) return noModel(context, planNoModel());
    try {
      const state = await runner.decide(id, decision, actorOf(context));
      return await finish(context, runner, state);
    } catch (error) {
      return failed(context, id, error);
    }
  },

  async execute(context, rest) {
    const id = sessionIdOf(rest);
    const collab = store(context);
    const session = await collab.get(id);
    const key = await context.connectionKey();
    if (session.connection !== key) throw otherDatabase(session, key);
    const jobRunner = await buildRunner(context, { runs: true, provider: undefined });
    const { outcome } = await executeAsJob(collab, jobRunner, id, actorOf(context));
    const view = await readSessionView(collab, id);
    print(context, view, outcome);
    if (!context.args.flags.json)
      context.io.stdout(
        `\nJob ${outcome.job.id} waits at its plan review: pg-agent job show ${outcome.job.id}, then pg-agent job approve ${outcome.job.id}.\n`,
      );
    return EXIT.ok;
  },
};

/** After a step: a person at a terminal decides here; otherwise a decision point exits 3 naming what is asked. */
async function finish(context: CommandContext, runner: CollabSessionRunner, first: SessionState): Promise<ExitCode> {
  const collab = store(context);
  let view = await readSessionView(collab, first.id);
  while (view.state.phase === 'awaiting-decision' && canPrompt(context) && context.io.prompt) {
    context.io.stdout(`${visibleText(renderSession(view))}\n\n`);
    const decision = await promptDecision(context.io.prompt, view.state.awaiting?.options ?? 0);
    if (decision === null) break;
    await runner.decide(view.state.id, decision, actorOf(context));
    view = await readSessionView(collab, first.id);
  }
  print(context, view);
  if (view.state.phase === 'awaiting-decision') {
    context.io.stderr(
      `Session ${view.state.id} waits for ${view.asked ?? 'a decision'}\n  pg-agent plan decide ${view.state.id} --option N | --clarify TEXT | --redirect TEXT | --more\n`,
    );
    return EXIT.held;
  }
  return EXIT.ok;
}

async function promptDecision(
  prompt: (q: string) => Promise<string>,
  options: number,
): Promise<SessionDecision | null> {
  for (;;) {
    const answer = (
      await prompt(`Decide: option number (1-${options}), c = clarify, r = redirect, m = more analysis, q = later: `)
    )
      .trim()
      .toLowerCase();
    if (answer === 'q' || answer === '') return null;
    if (/^\d+$/.test(answer) && Number(answer) >= 1 && Number(answer) <= options)
      return { kind: 'option', option: Number(answer) };
    if (answer === 'm') return { kind: 'more' };
    if (answer === 'c' || answer === 'r') {
      const text = (await prompt(answer === 'c' ? 'Your answer / constraints: ' : 'The new direction: ')).trim();
      if (text !== '') return answer === 'c' ? { kind: 'clarify', text } : { kind: 'redirect', text };
    }
  }
}

function print(context: CommandContext, view: Awaited<ReturnType<typeof readSessionView>>, job?: JobOutcome): void {
  if (context.args.flags.json) context.io.stdout(`${JSON.stringify(sessionJson(view, job ? { job } : {}))}\n`);
  else context.io.stdout(`${visibleText(renderSession(view))}\n`);
}

/** The session's runner, or undefined when no model is configured at all. */
function planNoModel(): AgentError {
  return new AgentError(
    'CONFIG_INVALID',
    'pg-agent plan needs a language model and none is configured.',
    'Pass --models gemini:NAME,openai:NAME with GEMINI_API_KEY / OPENAI_BASE_URL set, or set GEMINI_API_KEY (or OPENAI_BASE_URL with --model).',
  );
}

async function sessionRunner(
  context: CommandContext,
  sessionModels?: readonly string[],
  onCreated?: (id: string) => void,
): Promise<CollabSessionRunner | undefined> {
  const { args, io } = context;
  const providers = providersOf(context, sessionModels);
  if (!providers) return undefined;
  return new CollabSessionRunner({
    store: store(context),
    db: await context.openDb(),
    connectionKey: await context.connectionKey(),
    providers,
    loadSnapshot: () => context.loadSchema(),
    settings: await cliSafety(context),
    logger: context.logger,
    ...(args.flags.timeoutMs ? { modelTimeoutMs: Math.max(args.flags.timeoutMs, 60_000) } : {}),
    progress: (message) => io.stderr(`${message}\n`),
    ...(onCreated ? { onSaved: (state: SessionState) => onCreated(state.id) } : {}),
  });
}

/**
 * A step that failed once the session existed: with --json the session (id, phase, where it stands) and the
 * error; the session keeps its state, so the exit code says whether to fix the input (2) or retry (1).
 */
async function failed(context: CommandContext, id: string | undefined, error: unknown): Promise<ExitCode> {
  const e = toAgentError(error);
  if (id === undefined || !context.args.flags.json) throw error;
  const view = await readSessionView(store(context), id);
  context.io.stdout(`${JSON.stringify({ ...sessionJson(view), error: e.toInfo() })}\n`);
  context.io.stderr(`error: ${e.message}\n${e.advice ? `  ${e.advice}\n` : ''}`);
  return e.code === 'BAD_INPUT' ? EXIT.badInput : EXIT.failed;
}

/**
 * The models of --models (each needs its provider's environment), else those the session was started with,
 * else the one model of pg-agent ask; undefined when none is configured.
 */
export function providersOf(context: CommandContext, sessionModels?: readonly string[]): LlmProvider[] | undefined {
  const { env } = context.io;
  const listed = context.args.options.models ?? sessionModels?.join(',');
  if (typeof listed !== 'string') {
    const model = context.args.options.model;
    const single = providerFromEnv(env, typeof model === 'string' ? model : undefined, context.logger);
    return single ? [single] : undefined;
  }
  return parseModelList(listed).map((spec) => providerFor(spec, env, context));
}

function providerFor(spec: ModelSpec, env: CommandContext['io']['env'], context: CommandContext): LlmProvider {
  if (spec.provider === 'gemini') {
    const apiKey = env.GEMINI_API_KEY?.trim();
    if (!apiKey)
      throw new AgentError(
        'CONFIG_INVALID',
        `${specLabel(spec)} needs GEMINI_API_KEY, which is not set.`,
        'Keys: https://aistudio.google.com/apikey',
      );
    const baseUrl = env.PGAGENT_GEMINI_BASE_URL?.trim();
    return createProvider(
      { provider: 'gemini', model: spec.model, apiKey, ...(baseUrl ? { baseUrl } : {}), maxRetries: 1 },
      context.logger,
    );
  }
  const baseUrl = env.OPENAI_BASE_URL?.trim();
  if (!baseUrl)
    throw new AgentError(
      'CONFIG_INVALID',
      `${specLabel(spec)} needs OPENAI_BASE_URL (the OpenAI-compatible endpoint), which is not set.`,
      'e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1 for Ollama.',
    );
  const apiKey = env.OPENAI_API_KEY?.trim();
  return createProvider(
    { provider: 'openai-compatible', model: spec.model, baseUrl, ...(apiKey ? { apiKey } : {}), maxRetries: 1 },
    context.logger,
  );
}

async function decisionOf(context: CommandContext): Promise<SessionDecision> {
  const o = context.args.options;
  const given = [o.option !== undefined, o.clarify !== undefined, o.redirect !== undefined, o.more === true].filter(
    Boolean,
  ).length;
  if (given !== 1)
    throw new AgentError(
      'BAD_INPUT',
      'plan decide needs exactly one of --option N, --clarify TEXT, --redirect TEXT or --more.',
    );
  if (typeof o.option === 'string') {
    if (!/^\d+$/.test(o.option) || Number(o.option) < 1)
      throw new AgentError('BAD_INPUT', `--option needs an option number, got "${o.option}".`);
    return { kind: 'option', option: Number(o.option) };
  }
  if (o.more === true) return { kind: 'more' };
  const kind = typeof o.clarify === 'string' ? 'clarify' : 'redirect';
  const raw = String(kind === 'clarify' ? o.clarify : o.redirect);
  const text = (raw === '-' ? await context.io.readStdin() : raw).trim();
  if (text === '')
    throw new AgentError(
      'BAD_INPUT',
      `The ${kind === 'clarify' ? 'clarification' : 'new direction'} is empty.`,
      'Write what the analysts should take into account.',
    );
  rejectNul(text, kind);
  return { kind, text };
}

function maxRoundsOf(context: CommandContext): number | undefined {
  const raw = context.args.options['max-rounds'];
  if (typeof raw !== 'string') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 10)
    throw new AgentError('BAD_INPUT', `--max-rounds needs a whole number from 1 to 10, got "${raw}".`);
  return Number(raw);
}

function sessionIdOf(rest: string[]): string {
  const [id, ...extra] = rest;
  if (id === undefined || id === '')
    throw new AgentError(
      'BAD_INPUT',
      'Which session? The session id is missing.',
      'List them with pg-agent plan list.',
    );
  if (extra.length > 0)
    throw new AgentError('BAD_INPUT', `Unexpected arguments: ${extra.join(' ')}.`, 'One session id per call.');
  assertSessionId(id);
  return id;
}

function store(context: CommandContext): CollabStore {
  return new CollabStore(context.args.flags.workspace, { logger: context.logger });
}

function canPrompt(context: CommandContext): boolean {
  const { io, args } = context;
  return io.isTTY && !args.flags.noInput && !args.flags.json && io.prompt !== undefined;
}

function otherDatabase(session: SessionState, key: string): AgentError {
  return new AgentError(
    'BAD_INPUT',
    `Session ${session.id} works on ${session.connection}, not on ${key}.`,
    "Pass the session's database with --db URL (or --connection NAME), as when it was created.",
  );
}

function rejectNul(text: string, what: string): void {
  if (text.includes('\u0000')) throw new AgentError('BAD_INPUT', `The ${what} contains a NUL byte.`, 'Remove it.');
}

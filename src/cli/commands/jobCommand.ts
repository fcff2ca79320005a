/**
 * `pg-agent job`: bigger tasks as jobs. The agent explores the database and writes workspace.md, plan.md
 * and todos.yaml in .pgagent/jobs/<id>/, stops for the person's review, and after approval runs the todos;
 * every write waits for a person's approval. Each call works from the files, so any step can be a new process.
 */
import { AgentError } from '../../core/platform/errors';
import type { JobStatus } from '../../core/jobs/job';
import { isTerminal, JOB_STATUSES } from '../../core/jobs/job';
import { JobStore } from '../../core/jobs/jobStore';
import { applyPlanEdit, discardPlanEdit } from '../../core/review/planEdit';
import { sendReviewMessage } from '../../core/review/reviewChat';
import type { CliCommand, CommandContext } from '../command';
import { EXIT } from '../exitCodes';
import type { ExitCode } from '../exitCodes';
import { columns } from '../../core/present/format';
import { oneLine, renderUsage } from '../jobReport';
import { deciderOf } from '../decider';
import { actorOf, buildRunner, jobProvider, NO_MODEL_ADVICE, NO_MODEL_MESSAGE, noModel } from '../jobSetup';
import { embedderFromEnv } from '../modelsFromEnv';
import { atReview, canPrompt, findJob, finish, openJob, report, runJob } from '../jobSteps';

const SUBCOMMANDS = [
  'new',
  'list',
  'show',
  'approve',
  'revise',
  'skip',
  'chat',
  'apply-edit',
  'discard-edit',
  'pause',
  'cancel',
  'continue',
] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

export const jobCommand: CliCommand = {
  name: 'job',
  summary: 'bigger tasks: the agent plans, stops for your review, then runs the todos (writes wait for approval)',
  usage: `pg-agent job new [--title T] [--no-review] [--model M] [flags] [--] <task | ->
       pg-agent job list [--status S]
       pg-agent job show <id>
       pg-agent job approve <id> [--comment TEXT]
       pg-agent job revise <id> --feedback <TEXT | ->
       pg-agent job skip <id>
       pg-agent job chat <id> [--debug] [--] <message | ->
       pg-agent job apply-edit <id> <edit-id> | discard-edit <id> <edit-id>
       pg-agent job pause <id>
       pg-agent job cancel <id>
       pg-agent job continue <id>`,
  options: {
    title: { type: 'string' },
    'no-review': { type: 'boolean' },
    model: { type: 'string' },
    status: { type: 'string' },
    comment: { type: 'string' },
    feedback: { type: 'string' },
    debug: { type: 'boolean' },
    by: { type: 'string' },
    key: { type: 'string' },
  },
  optionsHelp: `  --title T           job title (default: the task's first line)
  --no-review         new: run from plan to execution without stopping for review (this job only)
  --model M           the model (default gemini-2.5-flash; required with OPENAI_BASE_URL)
  --status S          list: only jobs with this status (${JOB_STATUSES.join(', ')})
  --comment TEXT      approve: recorded with the approval
  --feedback TEXT     revise: what should change in the plan ("-" reads it from stdin)
  --debug             chat: give the review chat the job's audit trail
  --by NAME           new, continue: who asks (recorded on the tickets); approve, revise, skip: who decides
                      (default: the name of your only key, else $USER)
  --key NAME          approve, revise, skip: sign the decision with this key (default: your only key)`,
  description: `  new        create the job and run it to its first stop (normally the plan review); prints the plan and todos
  list       the jobs of the workspace, newest first
  show       job.json, where it stands, plan.md, todos with status, plan diff since the last review, tokens/cost
  approve    approve the plan under review; the agent runs the todos
  revise     request changes: the feedback goes to workspace.md ("## Review Feedback") and the agent re-plans
  skip       skip the review and run the plan as is
  chat       ask the review chat about the job; the reply streams to stdout
  apply-edit / discard-edit
             a plan.md edit the review chat proposed (its id is printed with the diff): write it to plan.md
             (refused if plan.md changed since) and commit it to the job history, or drop it
  pause      pause a job that is planning or running (status frozen): a run in another process stops at its
             next step; pg-agent job continue <id> picks it up
  cancel     cancel the job (final); a write it waits on is rejected
  continue   go on after a write's ticket was decided (pg-agent approvals approve/reject <ticket>),
             or after an interruption (model error, killed process)

A held write prompts on a terminal as pg-agent ask does (y/N; HIGH and CRITICAL need "yes"); with --no-input,
--json or no terminal the job stops with the impact and the ticket (exit 3). Actions that run the job use the
database of --db/--connection, which must be the one the job was created on. The model is Gemini when
GEMINI_API_KEY is set, else the OpenAI-compatible endpoint at OPENAI_BASE_URL. planning.interactive and
planning.maxReviewCycles (default true, 5) are read from ~/.config/pg-agent/config.json; .pgagent/config.json
may only tighten them (it cannot turn the plan review off).

Exit codes: 0 at the plan review, completed, cancelled or paused, and always for list/show/chat/pause/cancel ·
1 the job stopped on a run-time error (model, database; printed with advice; pg-agent job continue <id> goes on),
  the agent ended it as failed, or no model is configured (as pg-agent ask) ·
2 bad input: unknown subcommand, malformed or unknown job id, empty task/feedback/message, another database
  than the job's, or an action the job is not at (approve/revise when not at the review, pause when not
  planning or running, continue or cancel of a finished job) · 3 stopped at a write held for approval (ticket in the output). 4 is not used.
--json prints one object: {job, stop, todos, planChange, usage, plan, ticket?, execution?};
list: {jobs}; chat: {reply, tools, draftFeedback, planEdit, usage}.`,
  async run(context) {
    const [action, ...rest] = context.args.positionals;
    if (action === undefined)
      throw new AgentError(
        'BAD_INPUT',
        'pg-agent job needs a subcommand.',
        `Use one of ${SUBCOMMANDS.join(', ')}; see pg-agent job --help.`,
      );
    if (!(SUBCOMMANDS as readonly string[]).includes(action)) {
      throw new AgentError(
        'BAD_INPUT',
        `Unknown job subcommand "${action}".`,
        `Use one of ${SUBCOMMANDS.join(', ')}; see pg-agent job --help.`,
      );
    }
    return ACTIONS[action as Subcommand](context, rest);
  },
};

type Action = (context: CommandContext, rest: string[]) => Promise<ExitCode>;

const ACTIONS: Record<Subcommand, Action> = {
  async new(context, rest) {
    const task = (await textOrStdin(context, rest.join(' '))).trim();
    if (task === '') {
      throw new AgentError(
        'BAD_INPUT',
        'The task is empty.',
        'Describe it after the flags, e.g. pg-agent job new -- "archive orders older than two years", or "-" to read stdin.',
      );
    }
    rejectNul(task, 'task');
    const provider = jobProvider(context);
    if (!provider) return noModel(context, new AgentError('CONFIG_INVALID', NO_MODEL_MESSAGE, NO_MODEL_ADVICE));
    const runner = await buildRunner(context, { runs: true, provider });
    const title = stringOption(context, 'title');
    const outcome = await runner.start({
      task,
      ...(title !== undefined ? { title } : {}),
      ...(context.args.options['no-review'] === true ? { skipReview: true } : {}),
    });
    return finish(context, runner, outcome);
  },

  async list(context, rest) {
    noExtra(rest);
    const status = stringOption(context, 'status');
    if (status !== undefined && !(JOB_STATUSES as readonly string[]).includes(status)) {
      throw new AgentError('BAD_INPUT', `Unknown job status "${status}".`, `Use one of ${JOB_STATUSES.join(', ')}.`);
    }
    const jobs = (await new JobStore(context.args.flags.workspace, { logger: context.logger }).list()).filter(
      (j) => status === undefined || j.status === (status as JobStatus),
    );
    const { io } = context;
    if (context.args.flags.json) io.stdout(`${JSON.stringify({ jobs })}\n`);
    else if (jobs.length === 0)
      io.stdout(
        status === undefined ? 'No jobs. Start one with: pg-agent job new -- "<task>"\n' : `No ${status} jobs.\n`,
      );
    else
      io.stdout(
        `${columns(jobs.map((j) => [j.id, j.status, j.phase, `review ${j.reviewCycles}`, j.updatedAt, oneLine(j.title)]))}\n`,
      );
    return EXIT.ok;
  },

  async show(context, rest) {
    const { job, viewer } = await openJob(context, rest);
    return report(context, await viewer.outcome(job.id), 'viewed');
  },

  async approve(context, rest) {
    const { job, viewer } = await openJob(context, rest, { drives: true });
    atReview(await viewer.outcome(job.id), 'approve');
    const decider = await deciderOf(context);
    const comment = stringOption(context, 'comment');
    return runJob(context, job, (runner) =>
      runner.approvePlan(job.id, { ...decider, ...(comment !== undefined ? { comment } : {}) }),
    );
  },

  async revise(context, rest) {
    const { job, viewer } = await openJob(context, rest, { drives: true });
    const raw = stringOption(context, 'feedback');
    if (raw === undefined)
      throw new AgentError(
        'BAD_INPUT',
        'revise needs --feedback TEXT.',
        `e.g. pg-agent job revise ${job.id} --feedback "do it in batches", or --feedback - to read stdin.`,
      );
    const feedback = (await textOrStdin(context, raw)).trim();
    if (feedback === '')
      throw new AgentError('BAD_INPUT', 'The feedback is empty.', 'Write what should change in the plan.');
    rejectNul(feedback, 'feedback');
    atReview(await viewer.outcome(job.id), 'revise');
    const decider = await deciderOf(context);
    return runJob(context, job, (runner) => runner.requestChanges(job.id, feedback, decider));
  },

  async skip(context, rest) {
    const { job, viewer } = await openJob(context, rest, { drives: true });
    const current = await viewer.outcome(job.id);
    if (job.status === 'planning') {
      // Still planning (or interrupted while planning): no review this time, nothing runs now.
      const outcome = await viewer.skipReview(job.id, { by: actorOf(context) });
      if (!context.args.flags.json)
        context.io.stderr(`Job ${job.id} will not stop for review when its plan is ready.\n`);
      return report(context, outcome, 'viewed');
    }
    atReview(current, 'skip the review of');
    const decider = await deciderOf(context);
    return runJob(context, job, (runner) => runner.skipReview(job.id, decider));
  },

  async chat(context, rest) {
    const [id, ...words] = rest;
    const job = await findJob(context, id === undefined ? [] : [id]);
    const message = (await textOrStdin(context, words.join(' '))).trim();
    if (message === '')
      throw new AgentError(
        'BAD_INPUT',
        'The message is empty.',
        `e.g. pg-agent job chat ${job.id} -- "why this order of todos?", or "-" to read stdin.`,
      );
    rejectNul(message, 'message');
    const provider = jobProvider(context);
    if (!provider) return noModel(context, new AgentError('CONFIG_INVALID', NO_MODEL_MESSAGE, NO_MODEL_ADVICE));
    const { io, args } = context;
    // The schema (research tools) and the DBA read tools (dba tier) only when the flags name the job's own database; it is loaded on first use.
    const sameDatabase = (await context.connectionKey()) === job.connection;
    let streamed = '';
    const embedder = embedderFromEnv(io.env, context.logger);
    const turn = await sendReviewMessage(
      {
        store: new JobStore(args.flags.workspace, { logger: context.logger }),
        provider,
        ...(sameDatabase ? { loadSnapshot: () => context.loadSchema(), db: await context.openDb() } : {}),
        ...(embedder ? { embedder } : {}),
        logger: context.logger,
      },
      job.id,
      message,
      {
        ...(args.flags.json
          ? {}
          : {
              onText: (delta: string) => {
                streamed += delta;
                io.stdout(delta);
              },
            }),
        ...(args.options.debug === true ? { debug: true } : {}),
      },
    );
    if (args.flags.json) {
      io.stdout(
        `${JSON.stringify({ reply: turn.reply, tools: turn.tools, draftFeedback: turn.draftFeedback, planEdit: turn.planEdit, usage: turn.usage })}\n`,
      );
      return EXIT.ok;
    }
    // A reply that came without streaming (or only partly) is printed whole.
    if (streamed === '' && turn.reply !== '') io.stdout(turn.reply);
    const out: string[] = [''];
    if (turn.tools.length > 0)
      out.push('', 'Tools used:', ...turn.tools.map((t) => `  ${t.ok ? '·' : '✗'} ${t.summary}`));
    if (turn.draftFeedback !== null) {
      out.push(
        '',
        'Drafted feedback:',
        '',
        turn.draftFeedback.trimEnd(),
        '',
        'Send it with:',
        `  pg-agent job revise ${job.id} --feedback ${shellQuote(turn.draftFeedback.trim())}`,
      );
    }
    if (turn.planEdit !== null) {
      out.push(
        '',
        `Proposed edit of plan.md (${turn.planEdit.id}): ${turn.planEdit.summary}`,
        turn.planEdit.diff.trimEnd(),
        `Apply it with: pg-agent job apply-edit ${job.id} ${turn.planEdit.id}   (or discard-edit; or in the panel)`,
      );
    }
    out.push('', renderUsage(turn.usage));
    io.stdout(`${out.join('\n')}\n`);
    return EXIT.ok;
  },

  async 'apply-edit'(context, rest) {
    return planEditAction(context, rest, applyPlanEdit, 'applied to plan.md and committed');
  },

  async 'discard-edit'(context, rest) {
    return planEditAction(context, rest, discardPlanEdit, 'discarded');
  },

  async pause(context, rest) {
    const { job, viewer } = await openJob(context, rest);
    return report(context, await viewer.freeze(job.id), 'viewed');
  },

  async cancel(context, rest) {
    const { job, viewer } = await openJob(context, rest);
    return report(context, await viewer.cancel(job.id, actorOf(context)), 'viewed');
  },

  async continue(context, rest) {
    const { job, viewer } = await openJob(context, rest, { drives: true });
    if (isTerminal(job.status))
      throw new AgentError(
        'BAD_INPUT',
        `Job ${job.id} is ${job.status}; it cannot continue.`,
        'Start a new job instead.',
      );
    const current = await viewer.outcome(job.id);
    if (current.stop.kind === 'review') {
      // Decided with pg-agent approvals approve/reject (here or by a teammate): the job goes on accordingly.
      const ticket =
        current.stop.ticketId === undefined
          ? undefined
          : await (await context.openTicketStore()).get(current.stop.ticketId);
      if (!ticket || ticket.status === 'PENDING_APPROVAL') return report(context, current, 'ran');
      return runJob(context, job, (runner) => runner.resumeFromTicket(job.id));
    }
    if (current.stop.kind === 'approval') {
      const ticket = await (await context.openTicketStore()).get(current.stop.ticketId);
      if (ticket?.status === 'PENDING_APPROVAL') {
        // Still undecided: say so (exit 3), or let the person decide here on a terminal.
        if (!canPrompt(context)) return report(context, current, 'ran');
        return runJob(context, job, () => Promise.resolve(current));
      }
      // Decided with pg-agent approvals approve/reject (here or by a teammate): the job goes on accordingly.
      return runJob(context, job, (runner) => runner.resumeFromTicket(job.id));
    }
    return runJob(context, job, (runner) => runner.continue(job.id));
  },
};

/** Applies or discards a plan edit the review chat proposed; the job's state is unchanged otherwise. */
async function planEditAction(
  context: CommandContext,
  rest: string[],
  act: typeof applyPlanEdit,
  done: string,
): Promise<ExitCode> {
  const [id, editId, ...extra] = rest;
  const job = await findJob(context, id === undefined ? [] : [id, ...extra]);
  if (editId === undefined)
    throw new AgentError(
      'BAD_INPUT',
      'Which edit? The edit id is missing.',
      `It is printed with the proposed diff by pg-agent job chat ${job.id}.`,
    );
  await act(new JobStore(context.args.flags.workspace, { logger: context.logger }), job.id, editId, actorOf(context));
  if (context.args.flags.json)
    context.io.stdout(
      `${JSON.stringify({ job: job.id, edit: editId, status: act === applyPlanEdit ? 'applied' : 'discarded' })}\n`,
    );
  else context.io.stdout(`Edit ${editId} of job ${job.id} ${done}.\n`);
  return EXIT.ok;
}

function noExtra(rest: string[]): void {
  if (rest.length > 0) throw new AgentError('BAD_INPUT', `Unexpected arguments: ${rest.join(' ')}.`);
}

function rejectNul(text: string, what: string): void {
  if (text.includes('\u0000')) throw new AgentError('BAD_INPUT', `The ${what} contains a NUL byte.`, 'Remove it.');
}

async function textOrStdin(context: CommandContext, text: string): Promise<string> {
  return text === '-' ? context.io.readStdin() : text;
}

function stringOption(context: CommandContext, name: string): string | undefined {
  const value = context.args.options[name];
  return typeof value === 'string' ? value : undefined;
}

/** Single quotes for a POSIX shell, so a printed command can be pasted as is. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

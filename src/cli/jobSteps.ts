/**
 * One step of a job from the CLI: the job named by its id, a runner built for it, held writes decided at the
 * terminal (as at the pg-agent ask prompt), and the outcome reported with its exit code.
 */
import type { TicketStore } from '../core/approvals/ticketStore';
import { AgentError } from '../core/platform/errors';
import type { Job } from '../core/jobs/job';
import { assertJobId } from '../core/jobs/job';
import type { JobOutcome } from '../core/jobs/jobOutcome';
import type { JobRunner } from '../core/jobs/jobRunner';
import { JobStore } from '../core/jobs/jobStore';
import { formatCount } from '../core/present/format';
import { renderImpact } from '../core/present/renderImpact';
import { shownStatement } from '../core/present/shownSql';
import { promptApproval } from './approvalPrompt';
import type { CommandContext } from './command';
import { deciderOf } from './decider';
import type { ExitCode } from './exitCodes';
import { reportOutcome } from './jobReport';
import type { ReportMode } from './jobReport';
import { actorOf, buildRunner, jobProvider, NO_MODEL_ADVICE, NO_MODEL_MESSAGE, noModel } from './jobSetup';

/** Runs one step of the job with the model and the job's database, then asks about held writes on a terminal. */
export async function runJob(
  context: CommandContext,
  job: Job,
  step: (runner: JobRunner) => Promise<JobOutcome>,
): Promise<ExitCode> {
  const provider = jobProvider(context);
  if (!provider) return noModel(context, new AgentError('CONFIG_INVALID', NO_MODEL_MESSAGE, NO_MODEL_ADVICE));
  const runner = await buildRunner(context, { runs: true, provider, job });
  return finish(context, runner, await step(runner));
}

export async function finish(context: CommandContext, runner: JobRunner, outcome: JobOutcome): Promise<ExitCode> {
  return report(context, await decideOnTerminal(context, runner, await context.openTicketStore(), outcome), 'ran');
}

/** A person at a terminal decides each held write here, as at the pg-agent ask prompt; the job goes on. */
export async function decideOnTerminal(
  context: CommandContext,
  runner: JobRunner,
  tickets: TicketStore,
  outcome: JobOutcome,
): Promise<JobOutcome> {
  const { io } = context;
  let current = outcome;
  while (current.stop.kind === 'approval' && canPrompt(context) && io.prompt) {
    const stop = current.stop;
    const ticket = await tickets.get(stop.ticketId);
    if (ticket?.status !== 'PENDING_APPROVAL') return current;
    if (current.execution)
      io.stdout(
        `Executed (ticket ${current.execution.ticketId}): ${formatCount(current.execution.rows)} row(s) changed. Undo script: ${current.execution.undoFile}\n\n`,
      );
    // The ticket's own SQL is what runs: that is what is shown, every hidden character visible.
    const shown = shownStatement(ticket.sql.trimEnd());
    io.stdout(
      `Job ${current.job.id} wants to run${stop.todoId ? ` (todo ${stop.todoId})` : ''}:\n\n${shown.text}\n\n${renderImpact(stop.impact)}\n\n`,
    );
    const approve = await promptApproval(io.prompt, stop.impact, shown.hidden);
    const { key } = await deciderOf(context);
    current = await runner.decideWrite(current.job.id, {
      approve,
      ...(key ? { key } : { by: actorOf(context) }),
      comment: 'answered at the pg-agent job prompt',
    });
  }
  return current;
}

export function canPrompt(context: CommandContext): boolean {
  const { io, args } = context;
  return io.isTTY && !args.flags.noInput && !args.flags.json && io.prompt !== undefined;
}

export async function report(context: CommandContext, outcome: JobOutcome, mode: ReportMode): Promise<ExitCode> {
  return reportOutcome(
    context,
    {
      store: new JobStore(context.args.flags.workspace, { logger: context.logger }),
      ticketStore: await context.openTicketStore(),
    },
    outcome,
    mode,
  );
}

/** The job named by the one positional id; malformed or unknown ids are bad input (exit 2). */
export async function findJob(context: CommandContext, rest: string[]): Promise<Job> {
  const [id, ...extra] = rest;
  if (id === undefined || id === '')
    throw new AgentError('BAD_INPUT', 'Which job? The job id is missing.', 'List them with pg-agent job list.');
  if (extra.length > 0)
    throw new AgentError('BAD_INPUT', `Unexpected arguments: ${extra.join(' ')}.`, 'One job id per call.');
  assertJobId(id);
  return new JobStore(context.args.flags.workspace, { logger: context.logger }).get(id);
}

/**
 * The job, and a runner that only reads its files (no model, no database). An action that `drives` the
 * job first makes sure nobody else does (JOB_BUSY, exit 1), before any other check of where it stands.
 */
export async function openJob(
  context: CommandContext,
  rest: string[],
  options: { drives?: boolean } = {},
): Promise<{ job: Job; viewer: JobRunner }> {
  const job = await findJob(context, rest);
  if (options.drives) await (await context.openJobLeases()).assertFree(job.id);
  return { job, viewer: await buildRunner(context, { runs: false, provider: undefined, job }) };
}

export function atReview(current: JobOutcome, what: string): void {
  if (current.stop.kind === 'review') return;
  const where =
    current.stop.kind === 'approval'
      ? 'waiting for a write approval'
      : current.stop.kind === 'interrupted'
        ? `${current.job.status} (interrupted)`
        : current.job.status;
  throw new AgentError(
    'BAD_INPUT',
    `Cannot ${what} the plan of job ${current.job.id}: it is not at the plan review, it is ${where}.`,
    `See where it stands with pg-agent job show ${current.job.id}.`,
  );
}

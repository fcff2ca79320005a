/**
 * `pg-agent ask`: a question in plain words → SQL → read result, or a write held for a person's approval.
 * A held run is checkpointed in .pgagent/checkpoints/, so `--resume <thread>` continues it in a new process
 * once the ticket has been decided (`pg-agent approvals approve <ticket>`).
 */
import { join } from 'node:path';
import { fileAuditLog } from '../../core/ask/audit';
import type { AskOutcome } from '../../core/ask/askRun';
import { resumeAsk, startAsk } from '../../core/ask/askRun';
import { decideTicket } from '../../core/approvals/approvalPath';
import { deciderOf, requesterOf } from '../decider';
import type { AskDeps } from '../../core/ask/deps';
import { FileCheckpointSaver } from '../../core/ask/fileCheckpointer';
import { buildAskGraph } from '../../core/ask/graph';
import type { AskGraph } from '../../core/ask/graph';
import { assertThreadId, newThreadId } from '../../core/ask/threadId';
import type { Ticket } from '../../core/approvals/ticket';
import { AgentError } from '../../core/platform/errors';
import { sharedEmbeddingCache } from '../../core/llm/embeddingCache';
import { embedderFromEnv, providerFromEnv } from '../modelsFromEnv';
import { saveImpactReport } from '../../core/sql/writeArtifacts';
import { workspacePaths } from '../../core/config/workspace';
import type { CliCommand, CommandContext } from '../command';
import { promptApproval } from '../approvalPrompt';
import { shownStatement } from '../../core/present/shownSql';
import { EXIT } from '../exitCodes';
import type { ExitCode } from '../exitCodes';
import { formatCount } from '../../core/present/format';
import { renderImpact, renderRows } from '../../core/present/renderImpact';
import { cliSafety } from '../sqlInput';
import { statementsJson, ticketSummary } from '../../core/present/outputJson';

export const askCommand: CliCommand = {
  name: 'ask',
  summary: 'ask a question in plain words: the model writes SQL, reads run, writes wait for approval',
  usage: 'pg-agent ask [--resume THREAD] [--model M] [flags] [--] <question | ->',
  options: { resume: { type: 'string' }, model: { type: 'string' }, by: { type: 'string' }, key: { type: 'string' } },
  optionsHelp: `  --resume THREAD     continue a run held for approval (after pg-agent approvals approve/reject)
  --by NAME           who asks (recorded on the ticket; default: the name of your only key, else $USER)
  --key NAME          sign your answer at the approval prompt with this key (default: your only key)
  --model M           the model (default gemini-2.5-flash; required with OPENAI_BASE_URL)`,
  description:
    'The model is Gemini when GEMINI_API_KEY is set, else the OpenAI-compatible endpoint at OPENAI_BASE_URL\n' +
    '(OPENAI_API_KEY optional). The SQL it writes goes through the same safety path as pg-agent sql.',
  async run(context) {
    const { args, io } = context;
    const resume = typeof args.options.resume === 'string' ? args.options.resume : undefined;
    if (resume !== undefined) assertThreadId(resume);
    const question = resume === undefined ? (await context.readText()).trim() : '';
    if (resume === undefined && question === '') {
      throw new AgentError(
        'BAD_INPUT',
        'The question is empty.',
        'Pass it after the flags, e.g. pg-agent ask -- "how many orders last week?", or "-" to read stdin.',
      );
    }
    const provider = providerFromEnv(
      io.env,
      typeof args.options.model === 'string' ? args.options.model : undefined,
      context.logger,
    );
    if (!provider) {
      io.stderr(
        'error: pg-agent ask needs a language model and none is configured.\n' +
          '  Set GEMINI_API_KEY (keys: https://aistudio.google.com/apikey), or OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1) with --model and, if needed, OPENAI_API_KEY.\n',
      );
      return EXIT.failed;
    }
    const paths = workspacePaths(args.flags.workspace);
    const store = await context.openTicketStore();
    const deps: AskDeps = {
      db: await context.openDb(),
      connectionKey: await context.connectionKey(),
      ticketStore: store,
      provider,
      loadSnapshot: () => context.loadSchema(),
      settings: await cliSafety(context),
      logger: context.logger,
      requestedBy: await requesterOf(context),
      audit: fileAuditLog(paths.runs),
      undoDir: paths.undo,
    };
    const embedder = embedderFromEnv(io.env, context.logger);
    if (embedder)
      deps.embeddings = sharedEmbeddingCache(join(paths.schemaCache, 'embeddings.json'), embedder, context.logger);
    const graph = buildAskGraph(deps, new FileCheckpointSaver(paths.checkpoints));
    let outcome =
      resume === undefined ? await startAsk(graph, newThreadId(), question) : await resumeAsk(graph, store, resume);
    if (outcome.status === 'held') outcome = await askOnTerminal(context, graph, store, outcome);
    return report(context, outcome);
  },
};

/** On a terminal the person decides here (y/N; HIGH and CRITICAL need "yes") and the run goes on. */
async function askOnTerminal(
  context: CommandContext,
  graph: AskGraph,
  store: AskDeps['ticketStore'],
  held: AskOutcome,
): Promise<AskOutcome> {
  const { io, args } = context;
  const impact = held.state.impact;
  const ticketId = held.state.ticketId;
  if (!io.isTTY || args.flags.noInput || args.flags.json || !io.prompt || !impact || !ticketId) return held;
  const ticket = await store.get(ticketId);
  if (ticket?.status !== 'PENDING_APPROVAL') return held;
  // The ticket's own SQL is what runs: that is what is shown, every hidden character visible.
  const shown = shownStatement(ticket.sql);
  io.stdout(`${shown.text}\n\n${renderImpact(impact)}\n\n`);
  const approve = await promptApproval(io.prompt, impact, shown.hidden);
  const { key } = await deciderOf(context);
  await decideTicket(store, ticketId, {
    approve,
    ...(key ? { key } : { by: await requesterOf(context) }),
    seenHash: ticket.sqlHash,
    comment: 'answered at the pg-agent ask prompt',
  });
  return resumeAsk(graph, store, held.threadId);
}

async function report(context: CommandContext, outcome: AskOutcome): Promise<ExitCode> {
  const { io, args } = context;
  const { state, threadId } = outcome;
  const paths = workspacePaths(args.flags.workspace);
  const store = await context.openTicketStore();
  const ticket: Ticket | undefined = state.ticketId ? await store.get(state.ticketId) : undefined;
  if (ticket && outcome.status === 'held') await saveImpactReport(paths.impact, ticket);
  // Written by the execution itself, before its COMMIT.
  const undoFile = state.execution?.undoFile;
  const status = outcome.status === 'done' ? 'executed' : outcome.status === 'failed' ? 'error' : outcome.status;

  if (args.flags.json) {
    io.stdout(
      `${JSON.stringify({
        status,
        question: state.question,
        sql: state.sql ?? null,
        statements: state.classification ? statementsJson(state.classification) : [],
        fields: state.result?.fields ?? [],
        rows: state.result?.rows ?? [],
        rowCount: state.result?.rowCount ?? state.execution?.rows ?? 0,
        truncated: state.result?.truncated ?? false,
        ...(state.impact ? { impact: state.impact } : {}),
        ...(ticket ? { ticket: ticketSummary(ticket) } : {}),
        thread: threadId,
        ...(state.summary ? { summary: state.summary } : {}),
        ...(undoFile ? { undoFile } : {}),
        ...(state.error ? { error: state.error } : {}),
        usage: state.usage,
      })}\n`,
    );
  } else {
    if (state.sql) io.stdout(`${shownStatement(state.sql).text}\n\n`);
    if (state.result) io.stdout(`${renderRows(state.result)}\n`);
    if (state.summary) io.stdout(`\n${state.summary}\n`);
    if (state.execution)
      io.stdout(`Executed: ${formatCount(state.execution.rows)} rows changed. Undo script: ${undoFile ?? '(none)'}\n`);
    if (outcome.status === 'held' && state.impact && ticket) {
      io.stdout(
        `${renderImpact(state.impact)}\n\nHeld for approval: ticket ${ticket.id} (expires ${ticket.expiresAt}), run ${threadId}.\n`,
      );
      io.stdout(
        `  approve: pg-agent approvals approve ${ticket.id} --comment "…"\n  resume:  pg-agent ask --resume ${threadId}\n`,
      );
    }
    if (outcome.status === 'rejected')
      io.stdout(`Rejected: nothing was run${ticket ? ` (ticket ${ticket.id})` : ''}.\n`);
  }
  if (state.error) io.stderr(`error: ${state.error.message}\n${state.error.advice ? `  ${state.error.advice}\n` : ''}`);
  switch (outcome.status) {
    case 'done':
      return EXIT.ok;
    case 'held':
      return EXIT.held;
    case 'rejected':
    case 'refused':
      return EXIT.refused;
    case 'failed':
      return EXIT.failed;
  }
}

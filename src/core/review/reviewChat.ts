/**
 * The review chat of a job: the person's companion for reviewing it, with tools scoped to the job folder
 * in tiers switched on by the job's state. History in chat.jsonl, model calls in audit.jsonl.
 */
import type { Usage } from '../ask/state';
import { NO_USAGE, addUsage } from '../ask/state';
import { AgentError, toAgentError } from '../platform/errors';
import type { JobStatus } from '../jobs/job';
import { jobAuditLog, modelCallEvent } from '../jobs/jobAudit';
import { log as historyLog } from '../jobs/jobHistory';
import type { JobStore } from '../jobs/jobStore';
import type { ChatMessage, LlmProvider, LlmRequest } from '../llm/provider';
import type { Logger } from '../platform/logger';
import type { SchemaSnapshot } from '../../shared/schema';
import type { Db } from '../db/db';
import type { SafetySettings } from '../sql/safetySettings';
import { DEFAULT_SAFETY } from '../sql/safetySettings';
import type { ChatRecord, ChatToolUse } from './chatLog';
import { appendChatRecord, readChatRecords } from './chatLog';
import { listJobFiles } from './reviewFiles';
import { historyMessages, reviewSystemPrompt } from './reviewPrompt';
import type { ReviewTier } from './reviewTiers';
import { activeTiers, asksForDebugging, hasResearchFiles } from './reviewTiers';
import { reviewToolSpecs } from './reviewToolSpecs';
import type { ReviewToolContext } from './reviewTools';
import { jobEmbeddings } from './jobSearchIndex';
import type { Embedder } from '../llm/embeddings';
import { runReviewTool } from './reviewTools';

export interface ReviewChatDeps {
  store: JobStore;
  provider: LlmProvider;
  /** The database schema, for the research tier's ranked search; absent when no database is open. */
  loadSnapshot?: () => Promise<SchemaSnapshot>;
  /**
   * The job's own database, when open: the dba tier's read-only tools (db_health, top_queries,
   * advise_indexes) run on it with these limits (statement and lock timeouts; default DEFAULT_SAFETY).
   */
  db?: Db;
  settings?: SafetySettings;
  /** The embedding model, when one is configured: vector_search ranks by meaning (else by words). */
  embedder?: Embedder;
  logger: Logger;
  modelTimeoutMs?: number;
  now?: () => Date;
}

export interface ReviewTurnOptions {
  /** The reply's text as the model writes it. */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
  /** The person switched on debugging (the debug tier is on anyway when the job failed). */
  debug?: boolean;
}

export interface ReviewTurn {
  reply: string;
  tools: ChatToolUse[];
  /** Feedback drafted in this turn (for the Request changes box), or null. */
  draftFeedback: string | null;
  /** A plan.md edit proposed in this turn, or null. */
  planEdit: { id: string; summary: string; diff: string } | null;
  usage: Usage;
  tiers: ReviewTier[];
}

/** Model rounds whose tool calls are run in one turn; one more round then has to answer. */
export const MAX_TOOL_ROUNDS = 8;
const LIMIT_NOTE = `You have used tools in ${MAX_TOOL_ROUNDS} rounds, the limit of one turn: do not call tools now. Answer with what you found, and say what is still open.`;
const NO_ANSWER = `(The review chat used tools in ${MAX_TOOL_ROUNDS} rounds without reaching an answer. Ask again, more narrowly.)`;
const MAX_MESSAGE_CHARS = 20_000;
const AUDIT_RESULT_CHARS = 4_000;
const CHAT_ARG_CHARS = 200;

/** Tool arguments as kept in chat.jsonl: long strings (a whole new plan) cut, the full call is in audit.jsonl. */
function argsForChat(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([key, value]) => [
      key,
      typeof value === 'string' && value.length > CHAT_ARG_CHARS ? `${value.slice(0, CHAT_ARG_CHARS)}…` : value,
    ]),
  );
}

/** The tiers of this turn, from the job's state, its folder and history, and what the person asked. */
async function tiersFor(
  deps: ReviewChatDeps,
  jobId: string,
  status: JobStatus,
  debugRequested: boolean,
): Promise<ReviewTier[]> {
  const dir = deps.store.jobDir(jobId);
  const hasHistory = await historyLog(dir, { limit: 1 }).then(
    (entries) => entries.length > 0,
    (error: unknown) => {
      deps.logger.warn('job history unreadable; history tools off', { jobId, error: toAgentError(error).message });
      return false;
    },
  );
  const files = deps.loadSnapshot
    ? []
    : (await listJobFiles(deps.store, jobId)).entries.filter((e) => e.kind === 'file').map((e) => e.path);
  return activeTiers({
    status,
    hasHistory,
    debugRequested,
    researchMaterial: deps.loadSnapshot !== undefined || hasResearchFiles(files),
    database: deps.db !== undefined,
  });
}

export async function sendReviewMessage(
  deps: ReviewChatDeps,
  jobId: string,
  text: string,
  options: ReviewTurnOptions = {},
): Promise<ReviewTurn> {
  const { store, provider, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const message = text.trim();
  if (message === '')
    throw new AgentError('BAD_INPUT', 'The message is empty.', 'Write what you want to know or change about the plan.');
  if (message.length > MAX_MESSAGE_CHARS)
    throw new AgentError(
      'BAD_INPUT',
      `The message is longer than ${MAX_MESSAGE_CHARS} characters.`,
      'Shorten it, or point the chat at the files instead of pasting them.',
    );
  const job = await store.get(jobId);
  const debugRequested = options.debug === true || asksForDebugging(message);
  const earlier = await readChatRecords(store, jobId, logger);
  const userRecord: ChatRecord = {
    type: 'user',
    at: now().toISOString(),
    text: message,
    ...(debugRequested ? { debug: true } : {}),
  };
  // Kept before the model is asked, so the person's message survives a failed turn.
  await appendChatRecord(store, jobId, userRecord);

  const tiers = await tiersFor(deps, jobId, job.status, debugRequested);
  let snapshot: Promise<SchemaSnapshot> | undefined;
  const loadSnapshot = deps.loadSnapshot;
  const context: ReviewToolContext = {
    store,
    jobId,
    tiers,
    logger,
    now,
    schema: loadSnapshot ? () => (snapshot ??= loadSnapshot()) : undefined,
    ...(deps.db
      ? {
          dba: {
            db: deps.db,
            settings: deps.settings ?? DEFAULT_SAFETY,
            loadSnapshot: () =>
              loadSnapshot
                ? (snapshot ??= loadSnapshot())
                : Promise.reject(new AgentError('BAD_INPUT', 'No schema is loaded in this chat.')),
          },
        }
      : {}),
    ...(deps.embedder ? { embeddings: jobEmbeddings(store, jobId, deps.embedder, logger) } : {}),
  };
  const audit = jobAuditLog(store, now);
  const tools = reviewToolSpecs(tiers);
  const system = reviewSystemPrompt(job, tiers);
  const messages: ChatMessage[] = [{ role: 'system', content: system }, ...historyMessages([...earlier, userRecord])];
  const toolUses: ChatToolUse[] = [];
  let usage = NO_USAGE;
  let reply = '';
  let draftFeedback: string | null = null;
  let planEdit: ReviewTurn['planEdit'] = null;
  let roundStart = 0;
  const onText = (delta: string) => {
    // Text of a later round starts a new paragraph after the text of an earlier one.
    const piece =
      reply.length > 0 && reply.length === roundStart && !/\s$/.test(reply) && delta !== '' ? `\n\n${delta}` : delta;
    reply += piece;
    options.onText?.(piece);
  };
  logger.info('review chat turn', { jobId, tiers: tiers.join(','), history: messages.length - 2 });

  try {
    for (let round = 0; ; round++) {
      const lastRound = round >= MAX_TOOL_ROUNDS;
      // The tools stay declared in the last round (Gemini pairs every earlier call with its declaration);
      // the system prompt tells the model to answer, and calls it still makes are not run.
      const request: LlmRequest = {
        messages: lastRound
          ? [{ role: 'system', content: `${system}\n\n${LIMIT_NOTE}` }, ...messages.slice(1)]
          : [...messages],
        tools,
        temperature: 0.2,
        timeoutMs: deps.modelTimeoutMs ?? 60_000,
        ...(options.signal ? { signal: options.signal } : {}),
      };
      roundStart = reply.length;
      const response = await provider.stream(request, onText);
      // A provider that delivered the text without deltas still gives the reply its text.
      if (reply.length === roundStart && response.text !== '') onText(response.text);
      await audit.recordJob(jobId, modelCallEvent('review_chat', 'review', request.messages, response));
      usage = addUsage(usage, {
        calls: 1,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        costUsd: response.costUsd,
      });
      if (response.toolCalls.length === 0) break;
      if (lastRound) {
        logger.warn('review chat reached its tool round limit', { jobId, rounds: MAX_TOOL_ROUNDS });
        if (reply.trim() === '') onText(NO_ANSWER);
        break;
      }

      messages.push({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
      for (const call of response.toolCalls) {
        const run = await runReviewTool(context, call);
        toolUses.push({ name: call.name, args: argsForChat(call.args), ok: run.ok, summary: run.summary });
        await audit.recordJob(jobId, {
          type: 'tool_call',
          phase: 'review',
          name: call.name,
          args: call.args,
          ok: run.ok,
          result: run.text.slice(0, AUDIT_RESULT_CHARS),
        });
        if (run.effect?.kind === 'draft_feedback') draftFeedback = run.effect.text;
        if (run.effect?.kind === 'plan_edit') planEdit = run.effect.edit;
        messages.push({ role: 'tool', content: run.content, toolCallId: call.id, name: call.name });
      }
    }
  } catch (error) {
    const e = toAgentError(error);
    logger.error('review chat turn failed', { jobId, code: e.code, error: e.message });
    await audit
      .recordJob(jobId, { type: 'error', node: 'review_chat', code: e.code, message: e.message })
      .catch((recordError: unknown) => {
        logger.warn('could not record the review chat error', { jobId, error: toAgentError(recordError).message });
      });
    throw e;
  }

  await appendChatRecord(store, jobId, {
    type: 'assistant',
    at: now().toISOString(),
    text: reply,
    tools: toolUses,
    tiers,
  });
  return { reply, tools: toolUses, draftFeedback, planEdit, usage, tiers };
}

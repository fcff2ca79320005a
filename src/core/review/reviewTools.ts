/**
 * Runs one tool call of the review chat. Arguments are checked (the model is untrusted), every path stays
 * inside the job folder, and any failure comes back to the model as a tool error it can act on: a tool
 * never ends the turn. Results are cut to what a model turn can hold, with a note saying so.
 */
import { toAgentError, AgentError } from '../platform/errors';
import { diff as historyDiff, log as historyLog, show as historyShow } from '../jobs/jobHistory';
import type { JobStore } from '../jobs/jobStore';
import type { EmbeddingCache } from '../llm/embeddingCache';
import type { ToolCall } from '../llm/provider';
import type { Logger } from '../platform/logger';
import type { SchemaSnapshot } from '../../shared/schema';
import { adviseIndexesText, dbHealth, topQueriesText } from '../jobs/phases/dbaTools';
import type { ReadToolContext } from '../jobs/phases/readTools';
import { appendChatRecord } from './chatLog';
import { getAgentConversation, getAuditTrail, getJob, getLlmRequest, getTodos, searchAudit } from './debugTools';
import type { ProposedPlanEdit } from './planEdit';
import { proposePlanEdit } from './planEdit';
import type { RankedHit, SearchChunk } from './rankedSearch';
import { chunkFile, chunkSchema, rankByMeaning, rankChunks } from './rankedSearch';
import { LOG_FILES, checkJobPath, listJobFiles, readJobFile, searchJobFiles, searchableFiles } from './reviewFiles';
import type { ReviewTier } from './reviewTiers';
import type { ReviewToolArgs, ReviewToolName } from './reviewToolSpecs';
import { REVIEW_TOOL_ARGS, REVIEW_TOOLS, isReviewToolName, toolAvailable } from './reviewToolSpecs';

/** Longest tool result the model is given; the rest is cut with a note. */
export const TOOL_RESULT_LIMIT = 8_000;
const SEARCH_HIT_LIMIT = 40;

export interface ReviewToolContext {
  store: JobStore;
  jobId: string;
  tiers: readonly ReviewTier[];
  logger: Logger;
  now: () => Date;
  /** The schema for ranked_search; undefined when no database is open. Rejects when it cannot be loaded. */
  schema: (() => Promise<SchemaSnapshot>) | undefined;
  /** The job's database for the DBA tools (db_health, top_queries, advise_indexes); undefined when none is open. */
  dba?: ReadToolContext;
  /** The job's embeddings (`<job>/.index/vectors.json`) when an embedding model is configured, for vector_search. */
  embeddings?: EmbeddingCache;
}

export type ToolEffect = { kind: 'draft_feedback'; text: string } | { kind: 'plan_edit'; edit: ProposedPlanEdit };

export interface ToolRun {
  ok: boolean;
  /** What the model gets back: a JSON object `{"result": ...}` or `{"error": ...}`. */
  content: string;
  /** The result or error as plain text (for audit.jsonl). */
  text: string;
  /** One line for the chat view. */
  summary: string;
  effect?: ToolEffect;
}

export function clip(text: string, limit = TOOL_RESULT_LIMIT, more = ''): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}\n… (${text.length - limit} more characters cut${more})`;
}

const short = (text: string, max = 60) => (text.length <= max ? text : `${text.slice(0, max)}…`);

function summaryOf(name: ReviewToolName, args: Record<string, unknown>): string {
  const s = (key: string) => (typeof args[key] === 'string' ? short(args[key]) : '');
  switch (name) {
    case 'read_workspace_file':
      return `read ${s('path')}`;
    case 'list_workspace_files':
      return `listed ${s('path') || 'the job folder'}`;
    case 'search_workspace':
      return `searched the job for "${s('query')}"`;
    case 'ranked_search':
      return `ranked search for "${s('query')}"`;
    case 'vector_search':
      return `searched by meaning for "${s('query')}"`;
    case 'git_log':
      return 'git log';
    case 'git_diff':
      return `git diff ${short(s('from'), 10)}..${short(s('to'), 10)} ${s('path')}`;
    case 'git_show':
      return `git show ${short(s('commit'), 10)}:${s('path')}`;
    case 'get_job':
      return 'job details';
    case 'get_audit_trail':
      return `audit trail${s('type') ? ` (${s('type')})` : ''}`;
    case 'get_chat_history':
      return "the agent's conversation";
    case 'get_todos':
      return 'todos';
    case 'get_llm_request':
      return `model call #${typeof args.index === 'number' ? args.index : '?'}`;
    case 'search_audit':
      return `searched the audit trail for "${s('query')}"`;
    case 'db_health':
      return 'health checks';
    case 'top_queries':
      return 'the heaviest queries';
    case 'advise_indexes':
      return typeof args.sql === 'string'
        ? `index advice for ${short(args.sql)}`
        : 'index advice for the heaviest queries';
    case 'draft_feedback':
      return 'drafted feedback';
    case 'propose_plan_edit':
      return `proposed a plan edit: ${s('summary')}`;
  }
}

export async function runReviewTool(ctx: ReviewToolContext, call: ToolCall): Promise<ToolRun> {
  const fail = (summary: string, message: string): ToolRun => ({
    ok: false,
    content: JSON.stringify({ error: message }),
    text: message,
    summary: `${summary} (failed)`,
  });
  if (!isReviewToolName(call.name))
    return fail(`unknown tool ${short(call.name, 40)}`, `There is no tool "${call.name}" in the review chat.`);
  const name = call.name;
  const summary = summaryOf(name, call.args);
  if (!toolAvailable(name, ctx.tiers)) {
    const group = REVIEW_TOOLS[name].group;
    return fail(
      summary,
      `${name} is a ${group} tool and the ${group} tier is not on for this turn (on now: ${ctx.tiers.join(', ')}).`,
    );
  }
  const parsed = REVIEW_TOOL_ARGS[name].safeParse(call.args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail(
      summary,
      `Bad arguments for ${name}: ${issue ? `${issue.path.join('.') || 'arguments'}: ${issue.message}` : 'invalid'}.`,
    );
  }
  try {
    const { text, effect } = await dispatch(ctx, name, parsed.data);
    return { ok: true, content: JSON.stringify({ result: text }), text, summary, ...(effect ? { effect } : {}) };
  } catch (error) {
    const e = toAgentError(error);
    if (e.code === 'INTERNAL')
      ctx.logger.warn('review chat tool failed', { jobId: ctx.jobId, tool: name, error: e.message });
    return fail(summary, `${e.message}${e.advice ? ` ${e.advice}` : ''}`);
  }
}

type Dispatched = { text: string; effect?: ToolEffect };

/** The job's database for a DBA tool; the dba tier is on only with one, so this is a guard, not a path. */
function dbaOf(ctx: ReviewToolContext): ReadToolContext {
  if (!ctx.dba)
    throw new AgentError(
      'BAD_INPUT',
      "The job's database is not open in this chat, so its DBA tools cannot run.",
      "Open the review chat connected to the job's own database.",
    );
  return ctx.dba;
}

async function dispatch(
  ctx: ReviewToolContext,
  name: ReviewToolName,
  args: Record<string, unknown>,
): Promise<Dispatched> {
  const { store, jobId } = ctx;
  // The arguments were checked against REVIEW_TOOL_ARGS[name] before dispatch: this only names their type.
  const argsOf = <N extends ReviewToolName>(_name: N) => args as ReviewToolArgs<N>;
  switch (name) {
    case 'read_workspace_file':
      return { text: await readTool(ctx, argsOf(name)) };
    case 'list_workspace_files': {
      const { entries, truncated } = await listJobFiles(store, jobId, argsOf(name).path ?? '');
      if (entries.length === 0) return { text: 'The folder is empty.' };
      const lines = entries.map((e) =>
        e.kind === 'folder'
          ? `${e.path}/`
          : e.kind === 'link'
            ? `${e.path} (symbolic link, not followed)`
            : `${e.path} (${e.size} bytes)`,
      );
      return { text: clip([...lines, ...(truncated ? ['(listing cut: too many files)'] : [])].join('\n')) };
    }
    case 'search_workspace': {
      const { query } = argsOf(name);
      const { hits, more } = await searchJobFiles(store, jobId, query, SEARCH_HIT_LIMIT);
      if (hits.length === 0) return { text: `"${query}" does not occur in the job files.` };
      const lines = hits.map((h) => `${h.path}:${h.line}: ${h.text}`);
      return {
        text: clip(
          [...lines, ...(more > 0 ? [`(${more} more hit(s) not shown; search for something more precise)`] : [])].join(
            '\n',
          ),
        ),
      };
    }
    case 'vector_search':
      return { text: await vectorSearchTool(ctx, argsOf(name)) };
    case 'ranked_search':
      return { text: await rankedSearchTool(ctx, argsOf(name)) };
    case 'git_log': {
      const entries = await historyLog(store.jobDir(jobId), { limit: argsOf(name).limit ?? 20 });
      if (entries.length === 0) return { text: 'The job history has no commits yet.' };
      return {
        text: clip(
          entries
            .map((e) => `${e.oid.slice(0, 10)} ${e.time.toISOString()} ${e.message.split('\n')[0] ?? ''}`)
            .join('\n'),
        ),
      };
    }
    case 'git_diff': {
      const a = argsOf(name);
      const path = historyPath(a.path);
      const dir = store.jobDir(jobId);
      const text = await historyDiff(dir, await resolveRef(dir, a.from), await resolveRef(dir, a.to), path);
      return { text: clip(text === '' ? `${path} is the same in both commits.` : text) };
    }
    case 'git_show': {
      const a = argsOf(name);
      const dir = store.jobDir(jobId);
      return { text: clip(await historyShow(dir, await resolveRef(dir, a.commit), historyPath(a.path))) };
    }
    case 'get_job':
      return { text: clip(await getJob(store, jobId)) };
    case 'get_audit_trail': {
      const a = argsOf(name);
      return { text: clip(await getAuditTrail(store, jobId, a.type, a.limit ?? 40)) };
    }
    case 'get_chat_history':
      return { text: clip(await getAgentConversation(store, jobId, argsOf(name).limit ?? 15)) };
    case 'get_todos':
      return { text: clip(await getTodos(store, jobId)) };
    case 'get_llm_request': {
      const a = argsOf(name);
      return {
        text: page(
          await getLlmRequest(store, jobId, a.index),
          a.offset ?? 0,
          `call get_llm_request with index ${a.index} and offset`,
        ),
      };
    }
    case 'search_audit':
      return { text: clip(await searchAudit(store, jobId, argsOf(name).query, SEARCH_HIT_LIMIT)) };
    case 'db_health': {
      const { checks } = argsOf(name);
      return { text: clip(await dbHealth(dbaOf(ctx), checks)) };
    }
    case 'top_queries': {
      const { order, limit } = argsOf(name);
      return { text: clip(await topQueriesText(dbaOf(ctx), order, limit)) };
    }
    case 'advise_indexes': {
      const { sql, top } = argsOf(name);
      return { text: clip(await adviseIndexesText(dbaOf(ctx), sql, top)) };
    }
    case 'draft_feedback': {
      const text = argsOf(name).text.trim();
      if (text === '') throw new AgentError('BAD_INPUT', 'The feedback is empty.');
      await appendChatRecord(store, jobId, { type: 'draft_feedback', at: ctx.now().toISOString(), text });
      return {
        text: 'The feedback is in the Request changes box. The person will read it, may edit it, and decides whether to send it.',
        effect: { kind: 'draft_feedback', text },
      };
    }
    case 'propose_plan_edit': {
      const a = argsOf(name);
      const edit = await proposePlanEdit(
        store,
        jobId,
        { newPlan: a.new_plan, summary: a.summary },
        { now: ctx.now, logger: ctx.logger },
      );
      return {
        text: `Plan edit ${edit.id} is proposed and shown to the person as this diff; plan.md changes only if they apply it.\n${clip(edit.diff, TOOL_RESULT_LIMIT - 200)}`,
        effect: { kind: 'plan_edit', edit },
      };
    }
  }
}

/** A slice of a long text from `offset`, with a note on how to read on. */
function page(text: string, offset: number, how: string): string {
  if (offset >= text.length && offset > 0)
    throw new AgentError('BAD_INPUT', `offset ${offset} is past the end (${text.length} characters).`);
  const slice = text.slice(offset, offset + TOOL_RESULT_LIMIT);
  const rest = text.length - offset - slice.length;
  return rest > 0 ? `${slice}\n… (${rest} more characters; ${how} ${offset + slice.length})` : slice;
}

async function readTool(ctx: ReviewToolContext, args: ReviewToolArgs<'read_workspace_file'>): Promise<string> {
  const clean = checkJobPath(args.path);
  if (clean === 'audit.jsonl' && !ctx.tiers.includes('debug')) {
    throw new AgentError(
      'BAD_INPUT',
      'audit.jsonl is read with the debug tools, which are not on for this turn.',
      'They are on when the job failed or when the person asks for debugging (a message starting with /debug).',
    );
  }
  const { path, text } = await readJobFile(ctx.store, ctx.jobId, clean);
  return page(text, args.offset ?? 0, `call read_workspace_file with path ${path} and offset`);
}

/** What the research tier searches: the job's text files (not its logs) and, when a database is open, the schema. */
export async function researchChunks(
  ctx: Pick<ReviewToolContext, 'store' | 'jobId' | 'schema'>,
): Promise<{ chunks: SearchChunk[]; note: string }> {
  const chunks = (await searchableFiles(ctx.store, ctx.jobId))
    .filter((f) => !LOG_FILES.has(f.path))
    .flatMap((f) => chunkFile(f.path, f.text));
  let note = 'no database is open, so the schema was not searched';
  if (ctx.schema) {
    try {
      chunks.push(...chunkSchema(await ctx.schema()));
      note = '';
    } catch (error) {
      note = `the schema could not be loaded (${toAgentError(error).message}), so only the job files were searched`;
    }
  }
  return { chunks, note };
}

function renderHits(hits: readonly RankedHit[], query: string, notes: readonly string[]): string {
  const note = notes
    .filter(Boolean)
    .map((n) => `\n(${n})`)
    .join('');
  if (hits.length === 0) return `Nothing matches "${query}".${note}`;
  const blocks = hits.map(
    (hit, i) =>
      `[${i + 1}] ${hit.chunk.source} (score ${hit.score.toFixed(2)})\n${clip(hit.chunk.text, 1200, '; read the file for the rest')}`,
  );
  return clip(`${blocks.join('\n\n')}${note}`);
}

async function rankedSearchTool(ctx: ReviewToolContext, args: ReviewToolArgs<'ranked_search'>): Promise<string> {
  const { chunks, note } = await researchChunks(ctx);
  return renderHits(rankChunks(chunks, args.query, args.limit ?? 8), args.query, [note]);
}

/** By meaning when the job has embeddings; by words (BM25, as ranked_search) otherwise or when they fail. */
async function vectorSearchTool(ctx: ReviewToolContext, args: ReviewToolArgs<'vector_search'>): Promise<string> {
  const { chunks, note } = await researchChunks(ctx);
  const limit = args.limit ?? 8;
  if (!ctx.embeddings)
    return renderHits(rankChunks(chunks, args.query, limit), args.query, [
      note,
      'no embedding model is configured, so this ranked by words (BM25)',
    ]);
  try {
    const hits = await rankByMeaning(ctx.embeddings, chunks, args.query, limit);
    return renderHits(hits, args.query, [note, `ranked by meaning with ${ctx.embeddings.embedder.model}`]);
  } catch (error) {
    ctx.logger.warn('vector_search fell back to words', { jobId: ctx.jobId, error: toAgentError(error).message });
    return renderHits(rankChunks(chunks, args.query, limit), args.query, [
      note,
      `the embedding model failed (${toAgentError(error).message}), so this ranked by words (BM25)`,
    ]);
  }
}

function historyPath(path: string): string {
  const clean = checkJobPath(path);
  if (clean === '') throw new AgentError('BAD_INPUT', 'Name a file of the job, such as plan.md.');
  return clean;
}

/** A commit id as given, or HEAD / HEAD~n resolved through the log (the history is linear). */
async function resolveRef(dir: string, ref: string): Promise<string> {
  const match = /^HEAD(?:~(\d+))?$/i.exec(ref.trim());
  if (!match) return ref.trim().toLowerCase();
  const back = Number(match[1] ?? 0);
  const entries = await historyLog(dir, { limit: back + 1 });
  const entry = entries[back];
  if (!entry)
    throw new AgentError(
      'BAD_INPUT',
      `The job history has no ${ref} (it has ${entries.length} commit(s)).`,
      'Take a commit id from git_log.',
    );
  return entry.oid;
}

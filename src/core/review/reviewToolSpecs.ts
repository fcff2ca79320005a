/**
 * The review chat's tools as data: arguments (zod, the model is untrusted), the tier each belongs to and
 * the description the model reads. One table feeds the model's tool list and the argument checks.
 */
import { z } from 'zod';
import type { ToolSpec } from '../llm/provider';
import { TOOL_ARGS, TOOLS } from '../jobs/phases/jobTools';
import type { ReviewTier } from './reviewTiers';

const pathArg = z.string().min(1).max(500);
const queryArg = z.string().min(1).max(500);
const commitArg = z
  .string()
  .min(1)
  .max(60)
  .describe('a commit id from git_log (at least 4 hex digits), or HEAD, HEAD~1, ...');

export const REVIEW_TOOL_ARGS = {
  read_workspace_file: z.strictObject({
    path: pathArg.describe(
      'relative to the job folder: plan.md, workspace.md, todos.yaml, sql/001-x.sql, tools/run_sql.md, ...',
    ),
    offset: z.number().int().min(0).optional().describe('character to start from, to read on in a long file'),
  }),
  list_workspace_files: z.strictObject({
    path: z.string().max(500).optional().describe('a folder of the job (default: the whole job)'),
  }),
  search_workspace: z.strictObject({ query: queryArg.describe('text to find, case-insensitive') }),
  ranked_search: z.strictObject({
    query: queryArg.describe('words describing what you look for'),
    limit: z.number().int().min(1).max(20).optional().describe('how many chunks (default 8)'),
  }),
  vector_search: z.strictObject({
    query: queryArg.describe('what you look for, in your own words (it need not share words with the files)'),
    limit: z.number().int().min(1).max(20).optional().describe('how many chunks (default 8)'),
  }),
  git_log: z.strictObject({
    limit: z.number().int().min(1).max(100).optional().describe('commits, newest first (default 20)'),
  }),
  git_diff: z.strictObject({
    from: commitArg,
    to: commitArg,
    path: pathArg.describe('file relative to the job folder, e.g. plan.md'),
  }),
  git_show: z.strictObject({
    commit: commitArg,
    path: pathArg.describe('file relative to the job folder, e.g. plan.md'),
  }),
  get_job: z.strictObject({}),
  get_audit_trail: z.strictObject({
    type: z
      .string()
      .max(40)
      .optional()
      .describe('only records of this type: model_call, tool_call, sql, status, phase, review, approval, error'),
    limit: z.number().int().min(1).max(200).optional().describe('newest records (default 40)'),
  }),
  get_chat_history: z.strictObject({
    limit: z.number().int().min(1).max(100).optional().describe("the agent's latest model calls (default 15)"),
  }),
  get_todos: z.strictObject({}),
  get_llm_request: z.strictObject({
    index: z
      .number()
      .int()
      .min(1)
      .describe('line number of the model_call record in audit.jsonl (shown as #N by the other debug tools)'),
    offset: z.number().int().min(0).optional().describe('character to start from, to read on'),
  }),
  search_audit: z.strictObject({ query: queryArg.describe('text to find in audit.jsonl, case-insensitive') }),
  draft_feedback: z.strictObject({
    text: z.string().min(1).max(20_000).describe('the feedback for the planning agent, ready to send'),
  }),
  // The job agent's DBA tools (issue 26), the same arguments: one definition in jobTools.ts.
  db_health: TOOL_ARGS.db_health,
  top_queries: TOOL_ARGS.top_queries,
  advise_indexes: TOOL_ARGS.advise_indexes,
  propose_plan_edit: z.strictObject({
    new_plan: z.string().min(1).max(200_000).describe('the whole new plan.md (not a diff)'),
    summary: z.string().min(1).max(300).describe('one line: what the edit changes'),
  }),
} as const;

export type ReviewToolName = keyof typeof REVIEW_TOOL_ARGS;
export type ReviewToolArgs<N extends ReviewToolName> = z.infer<(typeof REVIEW_TOOL_ARGS)[N]>;

/** `always`: not a tier of the seed but tools the chat has in every tier (its way to hand work to the person). */
export type ToolGroup = ReviewTier | 'always';

export const REVIEW_TOOLS: Readonly<Record<ReviewToolName, { group: ToolGroup; description: string }>> = {
  read_workspace_file: {
    group: 'basic',
    description:
      'Read a file of this job (plan.md, workspace.md, todos.yaml, sql/*.sql, impact/*.json, undo/*.sql, tools/*.md, job.json).',
  },
  list_workspace_files: {
    group: 'basic',
    description: 'List the files of this job (or of one of its folders) with their sizes.',
  },
  search_workspace: {
    group: 'basic',
    description: 'Find text in the files of this job (case-insensitive); returns file:line: text.',
  },
  ranked_search: {
    group: 'research',
    description:
      'Search the job files (plan sections, todos, SQL) and the database schema (tables, columns, comments) by relevance, when you do not know the exact words.',
  },
  vector_search: {
    group: 'research',
    description:
      'Search the job files and the database schema by meaning (embeddings), for when the words differ: "who may approve" finds a section about sign-off. Without an embedding model it ranks by words, like ranked_search, and says so.',
  },
  git_log: {
    group: 'history',
    description:
      "The commits of this job's own history (a commit per phase boundary, per completed todo and per applied plan edit), newest first.",
  },
  git_diff: {
    group: 'history',
    description:
      'A unified diff of one file between two commits of the job history, e.g. how plan.md changed between reviews.',
  },
  git_show: { group: 'history', description: 'The text of one file as it was in a commit of the job history.' },
  get_job: {
    group: 'debug',
    description:
      'The job record (status, phase, review cycles, timestamps) and the totals of its model calls (tokens, cost).',
  },
  get_audit_trail: {
    group: 'debug',
    description:
      "The job's audit trail, one line per record (model calls, tool calls, SQL, status changes, errors), newest last.",
  },
  get_chat_history: {
    group: 'debug',
    description:
      "The planning agent's conversation: its model calls in order, each with what it was last told and what it answered or called.",
  },
  get_todos: { group: 'debug', description: 'The todos of the job with their status, dependencies and SQL.' },
  get_llm_request: {
    group: 'debug',
    description:
      'The full request (every message) and response of one model call, by its #N line number in the audit trail.',
  },
  search_audit: {
    group: 'debug',
    description: 'Find text in the audit trail (case-insensitive); returns #line type: excerpt.',
  },
  db_health: { group: 'dba', description: TOOLS.db_health.description },
  top_queries: { group: 'dba', description: TOOLS.top_queries.description },
  advise_indexes: { group: 'dba', description: `${TOOLS.advise_indexes.description} Builds nothing.` },
  draft_feedback: {
    group: 'always',
    description:
      'Put feedback for the planning agent in the Request changes box. The person reads it, may edit it and decides whether to send it; nothing is sent by this call.',
  },
  propose_plan_edit: {
    group: 'always',
    description:
      'Propose a new plan.md (the whole text). The person sees the diff and applies or discards it; nothing changes until they apply it.',
  },
};

export const REVIEW_TOOL_NAMES = Object.keys(REVIEW_TOOLS) as ReviewToolName[];

export function isReviewToolName(name: string): name is ReviewToolName {
  return (REVIEW_TOOL_NAMES as string[]).includes(name);
}

export function toolAvailable(name: ReviewToolName, tiers: readonly ReviewTier[]): boolean {
  const group = REVIEW_TOOLS[name].group;
  return group === 'always' || tiers.includes(group);
}

const specCache = new Map<ReviewToolName, ToolSpec>();

function spec(name: ReviewToolName): ToolSpec {
  let cached = specCache.get(name);
  if (!cached) {
    const { $schema: _ignored, ...parameters } = z.toJSONSchema(REVIEW_TOOL_ARGS[name], { io: 'input' }) as Record<
      string,
      unknown
    >;
    cached = { name, description: REVIEW_TOOLS[name].description, parameters };
    specCache.set(name, cached);
  }
  return cached;
}

/** The tool list of a turn with these tiers on. */
export function reviewToolSpecs(tiers: readonly ReviewTier[]): ToolSpec[] {
  return REVIEW_TOOL_NAMES.filter((name) => toolAvailable(name, tiers)).map(spec);
}

export function toolsOfTier(tier: ReviewTier): ReviewToolName[] {
  return REVIEW_TOOL_NAMES.filter((name) => REVIEW_TOOLS[name].group === tier);
}

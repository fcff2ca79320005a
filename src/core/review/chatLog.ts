/** chat.jsonl of a job: the review chat's history, one record per line, folded into entries for display. */
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import { isErrno } from '../fs/errno';
import type { JobStore } from '../jobs/jobStore';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';

export interface ChatToolUse {
  name: string;
  args: Record<string, unknown>;
  ok: boolean;
  /** One line for the folded view ("read plan.md", "git diff 3f2a1c0..9b8e7d6 plan.md"). */
  summary: string;
}

export type PlanEditStatus = 'proposed' | 'applied' | 'discarded';

export type ChatEntry =
  | { kind: 'user'; at: string; text: string }
  | { kind: 'assistant'; at: string; text: string; tools: ChatToolUse[] }
  /** Feedback the chat drafted; the person sends it (or edits it) with Request changes. */
  | { kind: 'draft_feedback'; at: string; text: string }
  /** A proposed edit of plan.md, shown as a diff; the person applies or discards it. */
  | { kind: 'plan_edit'; at: string; id: string; summary: string; diff: string; status: PlanEditStatus };

const at = z.string().min(1);
const toolUseSchema = z.object({
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  ok: z.boolean(),
  summary: z.string(),
});

/**
 * The lines of chat.jsonl. Appended in the order things happen; a plan edit's later status is a separate
 * line, so the file is never rewritten. Unknown fields are ignored (older readers, newer writers).
 */
export const chatRecordSchema = z.discriminatedUnion('type', [
  /** The person's message; `debug` when it switched the debug tools on. */
  z.object({ type: z.literal('user'), at, text: z.string(), debug: z.boolean().optional() }),
  /** The chat's reply with the tools it used to write it. */
  z.object({
    type: z.literal('assistant'),
    at,
    text: z.string(),
    tools: z.array(toolUseSchema),
    tiers: z.array(z.string()).optional(),
  }),
  z.object({ type: z.literal('draft_feedback'), at, text: z.string() }),
  /** A full new plan.md; `basePlanHash` is the sha256 of the plan.md it was written against. */
  z.object({
    type: z.literal('plan_edit'),
    at,
    id: z.string().min(1),
    summary: z.string(),
    diff: z.string(),
    basePlanHash: z.string().min(1),
    newPlan: z.string(),
  }),
  /** What the person (or a newer proposal) did with a plan edit; `commit` is the job-history commit of an apply. */
  z.object({
    type: z.literal('plan_edit_status'),
    at,
    id: z.string().min(1),
    status: z.enum(['applied', 'discarded']),
    by: z.string(),
    commit: z.string().optional(),
  }),
]);

export type ChatRecord = z.infer<typeof chatRecordSchema>;
export type PlanEditRecord = Extract<ChatRecord, { type: 'plan_edit' }>;

function isMissingFile(error: unknown): boolean {
  return error instanceof AgentError && isErrno(error.cause, 'ENOENT');
}

/** Every well-formed record of chat.jsonl in order; malformed lines are skipped with a warning. */
export async function readChatRecords(
  store: JobStore,
  jobId: string,
  logger: Logger = silentLogger,
): Promise<ChatRecord[]> {
  let text: string;
  try {
    text = await store.readFile(jobId, 'chat.jsonl');
  } catch (error) {
    if (isMissingFile(error)) return [];
    throw error;
  }
  const records: ChatRecord[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      logger.warn('skipping a chat.jsonl line that is not JSON', { jobId, line: index + 1 });
      return;
    }
    const parsed = chatRecordSchema.safeParse(raw);
    if (parsed.success) records.push(parsed.data);
    else
      logger.warn('skipping a chat.jsonl line that is not a chat record', {
        jobId,
        line: index + 1,
        error: parsed.error.issues[0]?.message,
      });
  });
  return records;
}

export function appendChatRecord(store: JobStore, jobId: string, record: ChatRecord): Promise<void> {
  return store.appendJsonl(jobId, 'chat.jsonl', record);
}

/** Records as display entries, in order; a plan edit shows the latest status recorded for it. */
export function foldChat(records: readonly ChatRecord[], logger: Logger = silentLogger): ChatEntry[] {
  const entries: ChatEntry[] = [];
  const edits = new Map<string, Extract<ChatEntry, { kind: 'plan_edit' }>>();
  for (const record of records) {
    switch (record.type) {
      case 'user':
        entries.push({ kind: 'user', at: record.at, text: record.text });
        break;
      case 'assistant':
        entries.push({ kind: 'assistant', at: record.at, text: record.text, tools: record.tools });
        break;
      case 'draft_feedback':
        entries.push({ kind: 'draft_feedback', at: record.at, text: record.text });
        break;
      case 'plan_edit': {
        const entry = {
          kind: 'plan_edit' as const,
          at: record.at,
          id: record.id,
          summary: record.summary,
          diff: record.diff,
          status: 'proposed' as PlanEditStatus,
        };
        edits.set(record.id, entry);
        entries.push(entry);
        break;
      }
      case 'plan_edit_status': {
        const entry = edits.get(record.id);
        if (entry) entry.status = record.status;
        else logger.warn('chat.jsonl has a status for an unknown plan edit', { edit: record.id });
        break;
      }
      default: {
        const unreachable: never = record;
        throw new AgentError('INTERNAL', `Unknown chat record ${JSON.stringify(unreachable)}.`);
      }
    }
  }
  return entries;
}

export async function readChat(
  store: JobStore,
  jobId: string,
  options: { logger?: Logger } = {},
): Promise<ChatEntry[]> {
  const logger = options.logger ?? silentLogger;
  return foldChat(await readChatRecords(store, jobId, logger), logger);
}

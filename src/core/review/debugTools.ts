/**
 * The review chat's debug tier: the job's record, audit trail, the planning agent's model calls and its
 * todos, read from the job folder and summarised so a person can ask "why did it fail?" in plain words.
 */
import type { Usage } from '../ask/state';
import { NO_USAGE, addUsage } from '../ask/state';
import { AgentError, toAgentError } from '../platform/errors';
import type { JobStore } from '../jobs/jobStore';
import type { Todo } from '../jobs/todos';
import { parseTodos } from '../jobs/todos';

export interface AuditLine {
  /** 1-based line number in audit.jsonl: the record's stable handle (#N). */
  index: number;
  record: Record<string, unknown>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const str = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
};

async function auditText(store: JobStore, jobId: string): Promise<string> {
  return store.readFile(jobId, 'audit.jsonl').catch((error: unknown) => {
    if (toAgentError(error).code === 'BAD_INPUT') return '';
    throw error;
  });
}

/** The review chat's own records (its model calls, tool uses and errors): left out of the trail it investigates. */
function isReviewChatRecord(record: Record<string, unknown>): boolean {
  return record.node === 'review_chat' || (record.type === 'tool_call' && record.phase === 'review');
}

function parseAudit(text: string): AuditLine[] {
  const lines: AuditLine[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      const parsed: unknown = JSON.parse(line);
      if (isRecord(parsed)) lines.push({ index: i + 1, record: parsed });
    } catch {
      // a torn line (a write in progress) is not a record yet
    }
  });
  return lines;
}

async function readAudit(store: JobStore, jobId: string): Promise<AuditLine[]> {
  return parseAudit(await auditText(store, jobId));
}

function callNames(value: unknown): string {
  if (!Array.isArray(value) || value.length === 0) return '';
  return value
    .map((call) => (isRecord(call) ? `${str(call.name)}(${oneLine(JSON.stringify(call.args ?? {}), 80)})` : '?'))
    .join(', ');
}

/** One line per audit record: "#12 10:00:01 model_call strategicModel: 1000 in / 200 out, called write_plan(...)". */
export function summarizeAudit(line: AuditLine): string {
  const r = line.record;
  const head = `#${line.index} ${str(r.at)} ${str(r.type)}`;
  switch (r.type) {
    case 'model_call': {
      const calls = callNames(r.toolCalls);
      return `${head} ${str(r.node)}${r.phase ? ` (${str(r.phase)})` : ''} ${str(r.model)}: ${num(r.inputTokens)} in / ${num(r.outputTokens)} out tokens, ${num(r.latencyMs)} ms${calls ? `, called ${calls}` : ''}${str(r.response) ? `, answered "${oneLine(str(r.response), 160)}"` : ''}`;
    }
    case 'tool_call':
      return `${head} ${str(r.name)}(${oneLine(JSON.stringify(r.args ?? {}), 120)}) ${r.ok === false ? 'FAILED' : 'ok'}: ${oneLine(str(r.result), 200)}`;
    case 'sql':
      return `${head} ${str(r.outcome)}: ${oneLine(str(r.sql), 200)}${r.detail ? ` (${oneLine(str(r.detail), 160)})` : ''}`;
    case 'status':
      return `${head} ${str(r.from)} -> ${str(r.to)}: ${oneLine(str(r.reason), 200)}`;
    case 'phase':
      return `${head} ${str(r.phase)} ${str(r.event)} #${num(r.iteration)}${r.summary ? `: ${oneLine(str(r.summary), 200)}` : ''}`;
    case 'review':
      return `${head} ${str(r.action)} by ${str(r.by)} (cycle ${num(r.cycle)})${r.feedback ? `: ${oneLine(str(r.feedback), 200)}` : ''}`;
    case 'approval':
      return `${head} ticket ${str(r.ticketId)} ${r.approve === true ? 'approved' : 'rejected'} by ${str(r.by)}${r.comment ? `: ${oneLine(str(r.comment), 160)}` : ''}`;
    case 'error':
      return `${head} ${str(r.node)} ${str(r.code)}: ${oneLine(str(r.message), 240)}`;
    default:
      return `${head} ${oneLine(JSON.stringify(r), 240)}`;
  }
}

function usageOf(lines: readonly AuditLine[]): Usage {
  return lines
    .filter((l) => l.record.type === 'model_call')
    .reduce(
      (total, l) =>
        addUsage(total, {
          calls: 1,
          inputTokens: num(l.record.inputTokens),
          outputTokens: num(l.record.outputTokens),
          costUsd: typeof l.record.costUsd === 'number' ? l.record.costUsd : null,
        }),
      NO_USAGE,
    );
}

export async function getJob(store: JobStore, jobId: string): Promise<string> {
  const job = await store.get(jobId);
  const lines = await readAudit(store, jobId);
  const counts: Record<string, number> = {};
  for (const line of lines.filter((l) => !isReviewChatRecord(l.record)))
    counts[str(line.record.type)] = (counts[str(line.record.type)] ?? 0) + 1;
  const agent = usageOf(lines.filter((l) => l.record.node !== 'review_chat'));
  const reviewChat = usageOf(lines.filter((l) => l.record.node === 'review_chat'));
  return JSON.stringify(
    { job, modelUsage: { agent, reviewChat, total: addUsage(agent, reviewChat) }, auditRecords: counts },
    null,
    1,
  );
}

/** The agent's audit trail (the review chat's own records left out), one line per record. */
export async function getAuditTrail(
  store: JobStore,
  jobId: string,
  type: string | undefined,
  limit: number,
): Promise<string> {
  const all = (await readAudit(store, jobId)).filter((l) => !isReviewChatRecord(l.record));
  const matching = type ? all.filter((l) => l.record.type === type) : all;
  if (matching.length === 0)
    return type
      ? `No audit records of type "${type}" (the trail has ${all.length} records).`
      : 'The audit trail is empty.';
  const shown = matching.slice(-limit);
  const header = `${matching.length} record(s)${type ? ` of type ${type}` : ''}${shown.length < matching.length ? `, the last ${shown.length} shown` : ''}:`;
  return [header, ...shown.map(summarizeAudit)].join('\n');
}

function lastTold(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  const last = [...(messages as unknown[])]
    .reverse()
    .find((m) => isRecord(m) && m.role !== 'system' && m.role !== 'assistant');
  if (!isRecord(last)) return '';
  return `${str(last.role)}${last.name ? ` ${str(last.name)}` : ''}: ${oneLine(str(last.content), 300)}`;
}

/** The planning agent's model calls (the review chat's own are left out), oldest first. */
export async function getAgentConversation(store: JobStore, jobId: string, limit: number): Promise<string> {
  const calls = (await readAudit(store, jobId)).filter(
    (l) => l.record.type === 'model_call' && !isReviewChatRecord(l.record),
  );
  if (calls.length === 0) return 'The planning agent made no model calls yet.';
  const shown = calls.slice(-limit);
  const blocks = shown.map((l) => {
    const r = l.record;
    const calls2 = callNames(r.toolCalls);
    return [
      `#${l.index} ${str(r.at)} ${str(r.node)}${r.phase ? ` (${str(r.phase)})` : ''}`,
      `  last input: ${lastTold(r.messages) || '(none)'}`,
      ...(str(r.response) ? [`  answered: ${oneLine(str(r.response), 400)}`] : []),
      ...(calls2 ? [`  called: ${calls2}`] : []),
    ].join('\n');
  });
  return [
    `${calls.length} model call(s) of the agent${shown.length < calls.length ? `, the last ${shown.length} shown` : ''} (full text: get_llm_request with the #N):`,
    ...blocks,
  ].join('\n');
}

/** The full request and response of one model call, response first (it is what is usually asked about). */
export async function getLlmRequest(store: JobStore, jobId: string, index: number): Promise<string> {
  const lines = await readAudit(store, jobId);
  const line = lines.find((l) => l.index === index);
  if (!line)
    throw new AgentError(
      'BAD_INPUT',
      `audit.jsonl has no record at line ${index}.`,
      'Take the #N of a model_call from get_audit_trail or get_chat_history.',
    );
  const r = line.record;
  if (r.type !== 'model_call')
    throw new AgentError(
      'BAD_INPUT',
      `Line ${index} of audit.jsonl is a ${str(r.type)} record, not a model call.`,
      'Use get_audit_trail with type model_call to find one.',
    );
  const messages = Array.isArray(r.messages) ? r.messages : [];
  return [
    `#${index} ${str(r.at)} ${str(r.node)}${r.phase ? ` (${str(r.phase)})` : ''} model ${str(r.model)}: ${num(r.inputTokens)} in / ${num(r.outputTokens)} out tokens, ${num(r.latencyMs)} ms, cost ${r.costUsd === null || r.costUsd === undefined ? 'unknown' : `$${num(r.costUsd)}`}`,
    '',
    '## Response',
    str(r.response) || '(no text)',
    ...(Array.isArray(r.toolCalls) && r.toolCalls.length > 0
      ? ['', '## Tool calls', JSON.stringify(r.toolCalls, null, 1)]
      : []),
    '',
    `## Request (${messages.length} messages)`,
    ...messages.map((m, i) => {
      if (!isRecord(m)) return `### ${i + 1}. ?`;
      const calls = Array.isArray(m.toolCalls) && m.toolCalls.length > 0 ? `\n(calls: ${callNames(m.toolCalls)})` : '';
      return `### ${i + 1}. ${str(m.role)}${m.name ? ` ${str(m.name)}` : ''}\n${str(m.content)}${calls}`;
    }),
  ].join('\n');
}

export async function searchAudit(store: JobStore, jobId: string, query: string, limit: number): Promise<string> {
  const needle = query.trim().toLowerCase();
  if (needle === '') throw new AgentError('BAD_INPUT', 'The search text is empty.');
  const hits: string[] = [];
  let more = 0;
  const text = await auditText(store, jobId);
  const reviewChatLines = new Set(
    parseAudit(text)
      .filter((l) => isReviewChatRecord(l.record))
      .map((l) => l.index),
  );
  text.split('\n').forEach((line, i) => {
    const at = line.toLowerCase().indexOf(needle);
    if (at === -1 || reviewChatLines.has(i + 1)) return;
    if (hits.length >= limit) {
      more += 1;
      return;
    }
    const type = /"type":"([a-z_]+)"/.exec(line)?.[1] ?? '?';
    const from = Math.max(0, at - 100);
    hits.push(
      `#${i + 1} ${type}: ${from > 0 ? '…' : ''}${line.slice(from, at + needle.length + 100)}${at + needle.length + 100 < line.length ? '…' : ''}`,
    );
  });
  if (hits.length === 0) return `"${query}" does not occur in the audit trail.`;
  return [
    ...hits,
    ...(more > 0 ? [`(${more} more matching record(s) not shown; search for something more precise)`] : []),
  ].join('\n');
}

export async function getTodos(store: JobStore, jobId: string): Promise<string> {
  const text = await store.readFile(jobId, 'todos.yaml');
  let todos: Todo[];
  try {
    todos = parseTodos(text);
  } catch (error) {
    return `todos.yaml does not parse (${toAgentError(error).message}). Its text:\n${text}`;
  }
  if (todos.length === 0) return 'todos.yaml has no todos.';
  return todos
    .map((t) =>
      [
        `- [${t.status}] ${t.id}: ${t.title}${t.depends_on?.length ? ` (after ${t.depends_on.join(', ')})` : ''}`,
        ...(t.sql ? [`    sql: ${t.sql.replace(/\n/g, '\n         ')}`] : []),
      ].join('\n'),
    )
    .join('\n');
}

/**
 * audit.jsonl of a job (SPEC §4): append-only, one JSON record per line with `at`. The phases graph, the
 * runner and the review chat write it; the review chat's debug tools and the usage totals read it.
 */
import type { AuditEvent, AuditLog } from '../ask/audit';
import type { ChatMessage, LlmResponse, ToolCall } from '../llm/provider';
import { withRedactedPasswords } from '../sql/secrets/textPasswords';
import type { JobStore } from './jobStore';

/** Where a job's model and tool calls happen: its two phases, or the review chat. */
type JobPhase = 'strategic' | 'tactical' | 'review';

/** Records a job writes beside the ask graph's events (model_call, sql, approval, error). */
export type JobAuditEvent =
  | AuditEvent
  /** A model call of the phases graph or of the review chat (node 'review_chat'), with the calls it made. */
  | (Extract<AuditEvent, { type: 'model_call' }> & { phase?: JobPhase; toolCalls?: ToolCall[] })
  /** A tool the agent (or the review chat) used; `result` is cut at 4,000 characters. */
  | { type: 'tool_call'; phase: JobPhase; name: string; args: Record<string, unknown>; ok: boolean; result: string }
  /** A person's review decision. */
  | { type: 'review'; action: 'approve' | 'revise' | 'skip'; by: string; cycle: number; feedback?: string }
  /** status changes are written by JobStore.setStatus: { type: 'status', from, to, reason }. */
  | { type: 'phase'; phase: 'strategic' | 'tactical'; event: 'start' | 'end'; iteration: number; summary?: string };

export type JobAuditRecord = JobAuditEvent & { at: string };

/** The audit record of one model call: what was sent, what came back, its tokens, latency and cost. */
export function modelCallEvent(
  node: string,
  phase: JobPhase,
  messages: ChatMessage[],
  response: LlmResponse,
): JobAuditEvent {
  return {
    type: 'model_call',
    node,
    phase,
    model: response.model,
    messages,
    response: response.text,
    toolCalls: response.toolCalls,
    inputTokens: response.usage.inputTokens,
    outputTokens: response.usage.outputTokens,
    latencyMs: response.latencyMs,
    costUsd: response.costUsd,
  };
}

/** The ask graph's AuditLog port, writing to the job's audit.jsonl (the "thread" is the job id). */
export function jobAuditLog(
  store: JobStore,
  now: () => Date = () => new Date(),
): AuditLog & { recordJob(jobId: string, event: JobAuditEvent): Promise<void> } {
  const recordJob = (jobId: string, event: JobAuditEvent) =>
    store.appendJsonl(jobId, 'audit.jsonl', withRedactedPasswords({ at: now().toISOString(), ...event }));
  return { record: recordJob, recordJob };
}

/**
 * One structured model call of a session through a fallback chain: the first model answers, or (timeout,
 * quota, server down, unreadable output after the one repair) the next configured model takes over, and the
 * hand-over is recorded. Every call made, repairs included, goes to the session's audit.jsonl and usage.
 */
import type { z } from 'zod';
import { AgentError } from '../platform/errors';
import { LlmError } from '../llm/llmError';
import type { ChatMessage, LlmProvider, LlmRequest, LlmResponse } from '../llm/provider';
import { completeStructured } from '../llm/structured';
import { providerLabel } from './collabModels';

export interface CallRecorder {
  /** Each model response, with what was sent (audit + usage). */
  response(node: string, model: string, messages: ChatMessage[], response: LlmResponse): Promise<void>;
  /** A model that failed and the one taking over (or none). */
  fallback(node: string, from: string, to: string | null, reason: string): Promise<void>;
}

export interface FallbackResult<T> {
  value: T;
  /** The model that answered. */
  model: string;
  /** Set when the first model of the chain failed. */
  fallback: { from: string; reason: string } | null;
  responses: LlmResponse[];
}

export interface FallbackOptions {
  node: string;
  recorder: CallRecorder;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Failures that must not hand over to the next model (the caller handles them, e.g. a degraded synthesis). */
  stopOn?: (error: LlmError) => boolean;
}

export async function callWithFallback<T>(
  chain: readonly LlmProvider[],
  messages: ChatMessage[],
  schema: z.ZodType<T>,
  options: FallbackOptions,
): Promise<FallbackResult<T>> {
  const failures: string[] = [];
  let firstFailure: { from: string; reason: string } | null = null;
  for (const [i, provider] of chain.entries()) {
    const label = providerLabel(provider);
    const responses: LlmResponse[] = [];
    const recording = recordingProvider(provider, async (req, response) => {
      responses.push(response);
      await options.recorder.response(options.node, label, req.messages, response);
    });
    const request: LlmRequest = {
      messages,
      temperature: 0.2,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    };
    try {
      const result = await completeStructured(recording, request, schema);
      return { value: result.value, model: label, fallback: firstFailure, responses };
    } catch (error) {
      if (!(error instanceof LlmError) || error.kind === 'cancelled' || options.signal?.aborted) throw error;
      if (options.stopOn?.(error)) throw error;
      const reason = `${error.kind}: ${error.message}`;
      firstFailure ??= { from: label, reason };
      failures.push(`${label} (${reason})`);
      const next = chain[i + 1];
      await options.recorder.fallback(options.node, label, next ? providerLabel(next) : null, reason);
    }
  }
  throw new AgentError(
    'INTERNAL',
    `No configured model could answer (${options.node}): ${failures.join('; ')}.`,
    'Check the models named in --models (keys, OPENAI_BASE_URL, quota); the session is kept, so pg-agent plan decide <id> --more tries the round again.',
  );
}

/** The provider with every completed response reported (repairs included), before it is parsed. */
function recordingProvider(
  provider: LlmProvider,
  onResponse: (req: LlmRequest, response: LlmResponse) => Promise<void>,
): LlmProvider {
  return {
    name: provider.name,
    model: provider.model,
    async complete(req) {
      const response = await provider.complete(req);
      await onResponse(req, response);
      return response;
    },
    async stream(req, onText) {
      const response = await provider.stream(req, onText);
      await onResponse(req, response);
      return response;
    },
  };
}

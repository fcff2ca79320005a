/** Any OpenAI-compatible chat completions endpoint (Ollama, llama.cpp server, vLLM) over plain fetch. */
import { z } from 'zod';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { openCallScope } from './callScope';
import type { CollectedReply } from './response';
import { toLlmResponse } from './response';
import { mapHttpFailure, mapTransportFailure, parseRetryAfter } from './httpErrors';
import { llmErrors } from './llmError';
import type { ChatMessage, LlmProvider, LlmRequest, LlmResponse, ModelPrices, ToolCall } from './provider';
import { providerOf } from './provider';
import { retryingCall } from './retry';

export interface OpenAiCompatibleProviderOptions {
  /** Up to and including the version segment, e.g. http://127.0.0.1:11434/v1 */
  baseUrl: string;
  apiKey?: string;
  model: string;
  prices?: ModelPrices;
  logger: Logger;
  maxRetries?: number;
  /** First backoff delay of retries (default 500 ms). */
  retryBaseDelayMs?: number;
}

const PROVIDER = 'openai-compatible';

// The endpoint is not trusted either: its answers are parsed, not cast.
const toolCallSchema = z.object({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.object({ name: z.string(), arguments: z.string().optional() }),
});
const completionSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(toolCallSchema).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).nullish(),
});
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().optional(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .optional(),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).nullish(),
});
const errorBodySchema = z.object({
  error: z.union([
    z.string(),
    z.object({
      message: z.string().optional(),
      type: z.string().nullish(),
      code: z.union([z.string(), z.number()]).nullish(),
    }),
  ]),
});

type Collected = CollectedReply;

export function createOpenAiCompatibleProvider(options: OpenAiCompatibleProviderOptions): LlmProvider {
  const { model, logger } = options;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const apiKey = options.apiKey?.trim();

  async function call(req: LlmRequest, onText: ((delta: string) => void) | undefined): Promise<LlmResponse> {
    if (req.signal?.aborted) throw llmErrors.cancelled(PROVIDER);
    return retryingCall(req.signal, onText, (emit, attempt) => runAttempt(req, emit, attempt), { ...options, logger });
  }

  async function runAttempt(
    req: LlmRequest,
    onText: ((delta: string) => void) | undefined,
    attempt: number,
  ): Promise<LlmResponse> {
    const scope = openCallScope(req.signal, req.timeoutMs);
    const started = Date.now();
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: onText ? 'text/event-stream' : 'application/json',
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify(buildBody(model, req, onText !== undefined)),
        signal: scope.signal,
      });
      if (!response.ok) throw await httpError(response);
      const collected = onText ? await readStream(response, onText) : parseCompletion(await response.json());
      if (collected.finishReason === 'content_filter') throw llmErrors.safetyBlock(PROVIDER, 'content_filter');
      return toLlmResponse(collected, {
        provider: 'openai-compatible',
        model,
        attempt,
        startedAt: started,
        prices: options.prices,
        defaultFinishReason: 'stop',
        logger,
      });
    } catch (error) {
      throw error instanceof AgentError ? error : mapTransportFailure(PROVIDER, error, scope);
    } finally {
      scope.dispose();
    }
  }

  return providerOf(PROVIDER, model, call);
}

function buildBody(model: string, req: LlmRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model, messages: req.messages.map(toWireMessage) };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.maxOutputTokens !== undefined) body.max_tokens = req.maxOutputTokens;
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (req.jsonSchema) {
    // strict: false because local servers support only parts of OpenAI's strict subset.
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: 'response', schema: req.jsonSchema, strict: false },
    };
  }
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return message.toolCalls && message.toolCalls.length > 0
        ? {
            role: 'assistant',
            content: message.content || null,
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: message.toolCallId ?? '',
        ...(message.name ? { name: message.name } : {}),
        content: message.content,
      };
    default: {
      const unexpected: never = message.role;
      throw new AgentError('INTERNAL', `Unknown chat role ${String(unexpected)}.`);
    }
  }
}

async function httpError(response: Response): Promise<AgentError> {
  const text = await response.text().catch(() => '');
  let message = text || response.statusText;
  const codes: string[] = [];
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      const inner = parsed.data.error;
      if (typeof inner === 'string') message = inner;
      else {
        if (inner.message) message = inner.message;
        if (inner.type) codes.push(inner.type);
        if (inner.code !== undefined && inner.code !== null) codes.push(String(inner.code));
      }
    }
  } catch {
    // Not JSON: keep the raw text.
  }
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  return mapHttpFailure(PROVIDER, {
    status: response.status,
    message,
    codes,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

function parseCompletion(json: unknown): Collected {
  const parsed = completionSchema.safeParse(json);
  if (!parsed.success)
    throw llmErrors.invalidOutput(PROVIDER, `unexpected response shape: ${z.prettifyError(parsed.error)}`);
  const choice = parsed.data.choices[0];
  if (!choice) throw llmErrors.invalidOutput(PROVIDER, 'the response has no choices.');
  return {
    text: choice.message.content ?? '',
    toolCalls: (choice.message.tool_calls ?? []).map((call, index) =>
      toToolCall(call.id ?? `call_${index}`, call.function.name, call.function.arguments ?? ''),
    ),
    inputTokens: parsed.data.usage?.prompt_tokens ?? 0,
    outputTokens: parsed.data.usage?.completion_tokens ?? 0,
    finishReason: choice.finish_reason ?? '',
  };
}

function toToolCall(id: string, name: string, rawArgs: string): ToolCall {
  if (rawArgs.trim() === '') return { id, name, args: {} };
  let args: unknown;
  try {
    args = JSON.parse(rawArgs);
  } catch {
    throw llmErrors.invalidOutput(PROVIDER, `the arguments of tool call ${name} are not JSON.`);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw llmErrors.invalidOutput(PROVIDER, `the arguments of tool call ${name} are not a JSON object.`);
  }
  return { id, name, args: args as Record<string, unknown> };
}

/** Reads `data: {...}` server-sent events up to `data: [DONE]`, delivering text deltas in order. */
async function readStream(response: Response, onText: (delta: string) => void): Promise<Collected> {
  if (!response.body) throw llmErrors.invalidOutput(PROVIDER, 'the streamed response has no body.');
  const out: Collected = { text: '', toolCalls: [], inputTokens: 0, outputTokens: 0, finishReason: '' };
  const partialCalls = new Map<number, { id: string; name: string; args: string }>();
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;

  const handleLine = (line: string): void => {
    const trimmed = line.trim();
    if (!trimmed.startsWith('data:')) return;
    const data = trimmed.slice('data:'.length).trim();
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw llmErrors.invalidOutput(PROVIDER, `a stream event is not JSON: ${data.slice(0, 200)}`);
    }
    const chunk = chunkSchema.safeParse(json);
    if (!chunk.success) throw llmErrors.invalidOutput(PROVIDER, `unexpected stream event: ${data.slice(0, 200)}`);
    if (chunk.data.usage) {
      out.inputTokens = chunk.data.usage.prompt_tokens ?? out.inputTokens;
      out.outputTokens = chunk.data.usage.completion_tokens ?? out.outputTokens;
    }
    for (const choice of chunk.data.choices ?? []) {
      const delta = choice.delta?.content;
      if (delta) {
        out.text += delta;
        onText(delta);
      }
      for (const call of choice.delta?.tool_calls ?? []) {
        const index = call.index ?? 0;
        const partial = partialCalls.get(index) ?? { id: '', name: '', args: '' };
        if (call.id) partial.id = call.id;
        if (call.function?.name) partial.name += call.function.name;
        if (call.function?.arguments) partial.args += call.function.arguments;
        partialCalls.set(index, partial);
      }
      if (choice.finish_reason) out.finishReason = choice.finish_reason;
    }
  };

  const reader = response.body.getReader();
  try {
    while (!done) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.indexOf('\n');
      while (newline !== -1 && !done) {
        handleLine(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
    }
    if (!done && buffer.trim()) handleLine(buffer);
  } finally {
    if (done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  out.toolCalls = [...partialCalls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => toToolCall(call.id || `call_${index}`, call.name, call.args));
  return out;
}

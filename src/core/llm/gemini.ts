/** The Gemini provider, through @google/genai (the successor of the deprecated @google/generative-ai). */
import { ApiError, GoogleGenAI } from '@google/genai';
import type { Content, FunctionCall, GenerateContentConfig, GenerateContentResponse, Part } from '@google/genai';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { openCallScope } from './callScope';
import type { CallScope } from './callScope';
import type { CollectedReply } from './response';
import { toLlmResponse } from './response';
import { mapHttpFailure, mapTransportFailure, parseRetryAfter } from './httpErrors';
import { llmErrors } from './llmError';
import type { ChatMessage, LlmProvider, LlmRequest, LlmResponse, ModelPrices, ToolCall } from './provider';
import { providerOf } from './provider';
import { retryingCall } from './retry';

export interface GeminiProviderOptions {
  apiKey?: string;
  model: string;
  /** Another endpoint speaking the Gemini REST API (tests, proxies). */
  baseUrl?: string;
  prices?: ModelPrices;
  logger: Logger;
  maxRetries?: number;
  /** First backoff delay of retries (default 500 ms). */
  retryBaseDelayMs?: number;
}

const PROVIDER = 'gemini';
const SAFETY_FINISH_REASONS = new Set(['SAFETY', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'IMAGE_SAFETY']);
/** Ids we made up for calls Gemini returned without one; Gemini must not see them back. */
const LOCAL_ID_PREFIX = 'gemini-call-';

export function createGeminiProvider(options: GeminiProviderOptions): LlmProvider {
  const { model, logger } = options;
  const apiKey = options.apiKey?.trim();
  // The client is built per provider; a missing key fails at call time so settings can be fixed later.
  const ai = apiKey
    ? new GoogleGenAI({
        apiKey,
        vertexai: false,
        ...(options.baseUrl ? { httpOptions: { baseUrl: options.baseUrl } } : {}),
      })
    : undefined;

  async function call(req: LlmRequest, onText: ((delta: string) => void) | undefined): Promise<LlmResponse> {
    if (!ai) throw llmErrors.missingKey(PROVIDER);
    if (req.signal?.aborted) throw llmErrors.cancelled(PROVIDER);
    return retryingCall(req.signal, onText, (emit, attempt) => runAttempt(ai, req, emit, attempt), {
      ...options,
      logger,
    });
  }

  async function runAttempt(
    client: GoogleGenAI,
    req: LlmRequest,
    onText: ((delta: string) => void) | undefined,
    attempt: number,
  ): Promise<LlmResponse> {
    const scope = openCallScope(req.signal, req.timeoutMs);
    const started = Date.now();
    // Retry-After is only visible on the HTTP response, which the SDK's ApiError does not keep.
    let retryAfterHeader: string | null = null;
    const recordingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!response.ok) retryAfterHeader = response.headers.get('retry-after');
      return response;
    };
    const params = {
      model,
      contents: toContents(req.messages),
      config: buildConfig(req, scope, recordingFetch),
    };
    try {
      let collected: Collected;
      if (onText) {
        collected = emptyCollected();
        const stream = await client.models.generateContentStream(params);
        for await (const chunk of stream) {
          const part = collect(chunk);
          mergeInto(collected, part);
          if (part.text) onText(part.text);
        }
      } else {
        collected = collect(await client.models.generateContent(params));
      }
      const blocked =
        collected.blockReason ??
        (SAFETY_FINISH_REASONS.has(collected.finishReason) ? collected.finishReason : undefined);
      if (blocked) throw llmErrors.safetyBlock(PROVIDER, blocked);
      return toLlmResponse(collected, {
        provider: 'gemini',
        model,
        attempt,
        startedAt: started,
        prices: options.prices,
        defaultFinishReason: 'STOP',
        logger,
      });
    } catch (error) {
      throw mapGeminiError(error, scope, retryAfterHeader);
    } finally {
      scope.dispose();
    }
  }

  return providerOf(PROVIDER, model, call);
}

function buildConfig(req: LlmRequest, scope: CallScope, fetchFn: typeof fetch): GenerateContentConfig {
  const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const config: GenerateContentConfig = {
    abortSignal: scope.signal,
    // The SDK's own retries are off (no retryOptions); withRetries owns retrying.
    httpOptions: { fetch: fetchFn },
  };
  if (system.length > 0) config.systemInstruction = system.join('\n\n');
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.maxOutputTokens !== undefined) config.maxOutputTokens = req.maxOutputTokens;
  if (req.jsonSchema) {
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = req.jsonSchema;
  }
  if (req.tools && req.tools.length > 0) {
    config.tools = [
      {
        functionDeclarations: req.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
  }
  return config;
}

/** Chat messages as Gemini contents: assistant → model, tool results → functionResponse parts. */
export function toContents(messages: ChatMessage[]): Content[] {
  const contents: Content[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    if (message.role === 'tool') {
      const part: Part = {
        functionResponse: {
          ...(message.toolCallId && !message.toolCallId.startsWith(LOCAL_ID_PREFIX) ? { id: message.toolCallId } : {}),
          name: message.name ?? 'tool',
          response: toResponseObject(message.content),
        },
      };
      const previous = contents[contents.length - 1];
      // Results of parallel calls go back together in one user turn.
      if (previous?.role === 'user' && previous.parts?.every((p) => p.functionResponse)) previous.parts.push(part);
      else contents.push({ role: 'user', parts: [part] });
      continue;
    }
    if (message.role === 'assistant') {
      const parts: Part[] = message.content ? [{ text: message.content }] : [];
      for (const call of message.toolCalls ?? []) {
        parts.push({
          functionCall: {
            ...(call.id.startsWith(LOCAL_ID_PREFIX) ? {} : { id: call.id }),
            name: call.name,
            args: call.args,
          },
          ...(call.thoughtSignature ? { thoughtSignature: call.thoughtSignature } : {}),
        });
      }
      contents.push({ role: 'model', parts: parts.length > 0 ? parts : [{ text: '' }] });
      continue;
    }
    contents.push({ role: 'user', parts: [{ text: message.content }] });
  }
  return contents;
}

/** Gemini wants an object as a function response; JSON objects pass through, anything else is wrapped. */
function toResponseObject(content: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(content);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
    return { result: parsed };
  } catch {
    return { result: content };
  }
}

interface Collected extends CollectedReply {
  blockReason: string | undefined;
}

function emptyCollected(): Collected {
  return { text: '', toolCalls: [], inputTokens: 0, outputTokens: 0, finishReason: '', blockReason: undefined };
}

let localIdCounter = 0;

function collect(response: GenerateContentResponse): Collected {
  const out = emptyCollected();
  const candidate = response.candidates?.[0];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.thought) continue;
    if (typeof part.text === 'string') out.text += part.text;
    if (part.functionCall) out.toolCalls.push(toToolCall(part.functionCall, part.thoughtSignature));
  }
  const usage = response.usageMetadata;
  if (usage) {
    out.inputTokens = usage.promptTokenCount ?? 0;
    // Thinking tokens are billed as output.
    out.outputTokens = (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
  }
  out.finishReason = candidate?.finishReason ?? '';
  out.blockReason = response.promptFeedback?.blockReason;
  return out;
}

function mergeInto(total: Collected, chunk: Collected): void {
  total.text += chunk.text;
  total.toolCalls.push(...chunk.toolCalls);
  // Usage in a stream is cumulative; the last chunk that has it is the total.
  if (chunk.inputTokens || chunk.outputTokens) {
    total.inputTokens = chunk.inputTokens;
    total.outputTokens = chunk.outputTokens;
  }
  if (chunk.finishReason) total.finishReason = chunk.finishReason;
  if (chunk.blockReason) total.blockReason = chunk.blockReason;
}

function toToolCall(call: FunctionCall, thoughtSignature: string | undefined): ToolCall {
  const args = call.args !== null && typeof call.args === 'object' && !Array.isArray(call.args) ? call.args : {};
  return {
    id: call.id ?? `${LOCAL_ID_PREFIX}${++localIdCounter}`,
    name: call.name ?? '',
    args,
    ...(thoughtSignature ? { thoughtSignature } : {}),
  };
}

function mapGeminiError(error: unknown, scope: CallScope, retryAfterHeader: string | null): AgentError {
  if (error instanceof AgentError) return error;
  if (error instanceof ApiError) {
    const body = parseGeminiErrorBody(error.message);
    const retryAfterMs = parseRetryAfter(retryAfterHeader) ?? body.retryDelayMs;
    return mapHttpFailure(
      PROVIDER,
      {
        status: error.status,
        message: body.message,
        codes: body.codes,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      },
      error,
    );
  }
  return mapTransportFailure(PROVIDER, error, scope);
}

/** The SDK puts the JSON error body in the message: {"error":{"code","message","status","details"}}. */
function parseGeminiErrorBody(text: string): { message: string; codes: string[]; retryDelayMs: number | undefined } {
  try {
    const parsed: unknown = JSON.parse(text);
    const inner = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined;
    if (!inner) return { message: text, codes: [], retryDelayMs: undefined };
    const codes: string[] = [];
    if (typeof inner.status === 'string') codes.push(inner.status);
    let retryDelayMs: number | undefined;
    for (const detail of Array.isArray(inner.details) ? (inner.details as unknown[]) : []) {
      if (!isRecord(detail)) continue;
      if (typeof detail.reason === 'string') codes.push(detail.reason);
      if (typeof detail.retryDelay === 'string') {
        const seconds = Number.parseFloat(detail.retryDelay);
        if (Number.isFinite(seconds)) retryDelayMs = seconds * 1000;
      }
    }
    return { message: typeof inner.message === 'string' ? inner.message : text, codes, retryDelayMs };
  } catch {
    return { message: text, codes: [], retryDelayMs: undefined };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

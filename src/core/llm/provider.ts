/** The model provider port: what the agent graph needs from a language model, whoever serves it. */
import type { LlmProviderName } from './llmError';

export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /**
   * Gemini's opaque thought signature for this call; it must be sent back with the call in the next
   * turn (Gemini 2.5+/3 function calling). Other providers leave it unset.
   */
  thoughtSignature?: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** On assistant messages: the calls the model made. */
  toolCalls?: ToolCall[];
  /** On tool messages: the call this result answers. */
  toolCallId?: string;
  /** On tool messages: the tool's name. */
  name?: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON schema object describing the arguments. */
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** When set, the model is asked for JSON matching this schema. */
  jsonSchema?: object;
  temperature?: number;
  maxOutputTokens?: number;
  /** Cancellation from the UI or CLI; an aborted call is never retried. */
  signal?: AbortSignal;
  /** Time limit of one attempt, in milliseconds. */
  timeoutMs?: number;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface LlmResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: LlmUsage;
  model: string;
  latencyMs: number;
  /** Estimated cost in USD from the price table; null when the model has no price. */
  costUsd: number | null;
  /** The provider's own finish reason (STOP, MAX_TOKENS, stop, tool_calls, ...). */
  finishReason: string;
}

export interface LlmProvider {
  readonly name: LlmProviderName;
  readonly model: string;
  complete(req: LlmRequest): Promise<LlmResponse>;
  /** Like complete, with text deltas delivered in order as they arrive. */
  stream(req: LlmRequest, onText: (delta: string) => void): Promise<LlmResponse>;
}

/** A provider from its one call: `onText` undefined for complete, the delta sink for stream. */
export function providerOf(
  name: LlmProviderName,
  model: string,
  call: (req: LlmRequest, onText: ((delta: string) => void) | undefined) => Promise<LlmResponse>,
): LlmProvider {
  return { name, model, complete: (req) => call(req, undefined), stream: (req, onText) => call(req, onText) };
}

export type ModelPrices = Record<string, { input: number; output: number }>;

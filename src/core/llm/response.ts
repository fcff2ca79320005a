/** What both providers collect from one call, and the LlmResponse (usage, latency, cost) made from it. */
import type { Logger } from '../platform/logger';
import { estimateCost } from './cost';
import type { LlmResponse, ModelPrices, ToolCall } from './provider';

export interface CollectedReply {
  text: string;
  toolCalls: ToolCall[];
  inputTokens: number;
  outputTokens: number;
  finishReason: string;
}

export function toLlmResponse(
  collected: CollectedReply,
  call: {
    provider: string;
    model: string;
    attempt: number;
    startedAt: number;
    prices: ModelPrices | undefined;
    defaultFinishReason: string;
    logger: Logger;
  },
): LlmResponse {
  const usage = { inputTokens: collected.inputTokens, outputTokens: collected.outputTokens };
  const latencyMs = Date.now() - call.startedAt;
  call.logger.debug(`${call.provider} call`, {
    model: call.model,
    attempt: call.attempt,
    latencyMs,
    ...usage,
    finishReason: collected.finishReason,
  });
  return {
    text: collected.text,
    toolCalls: collected.toolCalls,
    usage,
    model: call.model,
    latencyMs,
    costUsd: estimateCost(call.model, usage, call.prices),
    finishReason: collected.finishReason || call.defaultFinishReason,
  };
}

/**
 * Estimated cost of a model call from token usage. These are estimates: list prices change, tiers,
 * caching and long-context surcharges are ignored. The setting `postgresAgent.model.prices` overrides them.
 */
import type { LlmUsage, ModelPrices } from './provider';

/** USD per million tokens (Gemini API paid tier, prompts up to 200k tokens), as published in 2025. */
export const DEFAULT_PRICES: ModelPrices = {
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'gemini-2.5-pro': { input: 1.25, output: 10 },
};

/** Estimated USD, or null when the model is in neither table (local models are usually free). */
export function estimateCost(model: string, usage: LlmUsage, prices?: ModelPrices): number | null {
  const price = prices?.[model] ?? DEFAULT_PRICES[model];
  if (!price) return null;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}

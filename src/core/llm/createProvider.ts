/** Builds the configured model provider from settings (VS Code) or config/env (CLI). */
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import type { Embedder } from './embeddings';
import { createGeminiEmbedder, createOpenAiEmbedder } from './embeddings';
import { createGeminiProvider } from './gemini';
import { createOpenAiCompatibleProvider } from './openaiCompatible';
import type { LlmProvider, ModelPrices } from './provider';

export interface ProviderConfig {
  provider: 'gemini' | 'openai-compatible';
  model: string;
  apiKey?: string;
  baseUrl?: string;
  prices?: ModelPrices;
  maxRetries?: number;
}

export const DEFAULT_GEMINI_MODEL = 'gemini-2.5-flash';

export function createProvider(config: ProviderConfig, logger: Logger): LlmProvider {
  const common = {
    logger,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.prices ? { prices: config.prices } : {}),
    ...(config.maxRetries === undefined ? {} : { maxRetries: config.maxRetries }),
  };
  switch (config.provider) {
    case 'gemini':
      return createGeminiProvider({
        ...common,
        model: config.model.trim() || DEFAULT_GEMINI_MODEL,
        ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
      });
    case 'openai-compatible': {
      if (!config.baseUrl?.trim()) {
        throw new AgentError(
          'CONFIG_INVALID',
          'The OpenAI-compatible model provider needs a base URL.',
          'Set postgresAgent.model.openaiCompatible.baseUrl, e.g. http://127.0.0.1:11434/v1 for Ollama.',
        );
      }
      if (!config.model.trim()) {
        throw new AgentError(
          'CONFIG_INVALID',
          'The OpenAI-compatible model provider needs a model name.',
          'Set postgresAgent.model.openaiCompatible.model to a model the endpoint serves (e.g. qwen2.5-coder:7b).',
        );
      }
      return createOpenAiCompatibleProvider({ ...common, baseUrl: config.baseUrl.trim(), model: config.model.trim() });
    }
    default: {
      const unexpected: never = config.provider;
      throw new AgentError(
        'CONFIG_INVALID',
        `Unknown model provider ${String(unexpected)}.`,
        'Use gemini or openai-compatible.',
      );
    }
  }
}

/**
 * The embedding model of the configured provider, when one is named (postgresAgent.model.embeddingModel,
 * PGAGENT_EMBEDDING_MODEL; e.g. gemini-embedding-001, or nomic-embed-text on Ollama); undefined otherwise.
 * Off unless named: it sends every table's description to the provider once, and a call per question.
 */
export function createEmbedder(
  config: Pick<ProviderConfig, 'provider' | 'apiKey' | 'baseUrl'> & { embeddingModel?: string },
  logger: Logger,
): Embedder | undefined {
  const model = config.embeddingModel?.trim();
  if (!model) return undefined;
  if (config.provider === 'gemini') {
    if (!config.apiKey) return undefined;
    return createGeminiEmbedder({
      apiKey: config.apiKey,
      model,
      ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
      logger,
    });
  }
  if (!config.baseUrl?.trim()) return undefined;
  return createOpenAiEmbedder({
    baseUrl: config.baseUrl.trim(),
    model,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    logger,
  });
}

/**
 * The model and the embedding model the CLI uses, from the environment (GEMINI_API_KEY, else OPENAI_BASE_URL;
 * PGAGENT_EMBEDDING_MODEL): what ask, job and plan share.
 */
import type { Env } from '../core/db/connectionTarget';
import { createEmbedder, createProvider } from '../core/llm/createProvider';
import type { Embedder } from '../core/llm/embeddings';
import type { LlmProvider } from '../core/llm/provider';
import type { Logger } from '../core/platform/logger';

/** The configured model, or undefined when there is none (a clear error is the caller's). */
export function providerFromEnv(env: Env, model: string | undefined, logger: Logger): LlmProvider | undefined {
  const geminiKey = env.GEMINI_API_KEY?.trim();
  if (geminiKey) {
    const baseUrl = env.PGAGENT_GEMINI_BASE_URL?.trim();
    return createProvider(
      { provider: 'gemini', model: model ?? '', apiKey: geminiKey, ...(baseUrl ? { baseUrl } : {}), maxRetries: 1 },
      logger,
    );
  }
  const openAiUrl = env.OPENAI_BASE_URL?.trim();
  if (openAiUrl) {
    const apiKey = env.OPENAI_API_KEY?.trim();
    return createProvider(
      {
        provider: 'openai-compatible',
        model: model ?? '',
        baseUrl: openAiUrl,
        ...(apiKey ? { apiKey } : {}),
        maxRetries: 1,
      },
      logger,
    );
  }
  return undefined;
}

/** The embedding model named by PGAGENT_EMBEDDING_MODEL, of the same provider as providerFromEnv; else undefined. */
export function embedderFromEnv(env: Env, logger: Logger): Embedder | undefined {
  const embeddingModel = env.PGAGENT_EMBEDDING_MODEL?.trim();
  if (!embeddingModel) return undefined;
  const geminiKey = env.GEMINI_API_KEY?.trim();
  if (geminiKey) {
    const baseUrl = env.PGAGENT_GEMINI_BASE_URL?.trim();
    return createEmbedder(
      { provider: 'gemini', apiKey: geminiKey, ...(baseUrl ? { baseUrl } : {}), embeddingModel },
      logger,
    );
  }
  const apiKey = env.OPENAI_API_KEY?.trim();
  return createEmbedder(
    {
      provider: 'openai-compatible',
      baseUrl: env.OPENAI_BASE_URL?.trim() ?? '',
      ...(apiKey ? { apiKey } : {}),
      embeddingModel,
    },
    logger,
  );
}

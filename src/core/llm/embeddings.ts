/**
 * Text embeddings from the configured provider, when an embedding model is configured
 * (postgresAgent.model.embeddingModel, PGAGENT_EMBEDDING_MODEL): Gemini's batchEmbedContents through
 * @google/genai, or `/embeddings` of an OpenAI-compatible endpoint (Ollama, vLLM, OpenAI). They are one
 * more ranking signal (schema linking, the review chat's vector_search); words stay the fallback, so a
 * failure here is reported to the caller, which goes on without them.
 */
import { ApiError, GoogleGenAI } from '@google/genai';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { openCallScope } from './callScope';
import { mapHttpFailure, mapTransportFailure } from './httpErrors';
import { llmErrors } from './llmError';
import type { LlmProviderName } from './llmError';

/** What the vectors are for: some models embed a question and the documents it looks for differently. */
export type EmbedKind = 'query' | 'document';

export interface Embedder {
  readonly provider: LlmProviderName;
  readonly model: string;
  embed(texts: readonly string[], options: { kind: EmbedKind; signal?: AbortSignal }): Promise<Float32Array[]>;
}

/** Texts per request: Gemini's batchEmbedContents takes up to 100. */
const BATCH = 100;
const TIMEOUT_MS = 30_000;
const GEMINI_DIMENSIONS = 768;

export function createGeminiEmbedder(options: {
  apiKey: string;
  model: string;
  baseUrl?: string;
  logger: Logger;
}): Embedder {
  const ai = new GoogleGenAI({
    apiKey: options.apiKey,
    vertexai: false,
    ...(options.baseUrl ? { httpOptions: { baseUrl: options.baseUrl } } : {}),
  });
  return batched('gemini', options.model, options.logger, async (texts, kind, signal) => {
    const scope = openCallScope(signal, TIMEOUT_MS);
    try {
      const response = await ai.models.embedContent({
        model: options.model,
        contents: [...texts],
        // 768 of gemini-embedding-001's 3072 dimensions (it is trained to be cut so): a quarter of the cache.
        config: {
          taskType: kind === 'query' ? 'RETRIEVAL_QUERY' : 'RETRIEVAL_DOCUMENT',
          outputDimensionality: GEMINI_DIMENSIONS,
          abortSignal: scope.signal,
        },
      });
      return (response.embeddings ?? []).map((e) => e.values ?? []);
    } catch (error) {
      throw error instanceof ApiError
        ? mapHttpFailure('gemini', { status: error.status, message: error.message, codes: [] }, error)
        : mapTransportFailure('gemini', error, scope);
    } finally {
      scope.dispose();
    }
  });
}

export function createOpenAiEmbedder(options: {
  baseUrl: string;
  apiKey?: string;
  model: string;
  logger: Logger;
}): Embedder {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  return batched('openai-compatible', options.model, options.logger, async (texts, _kind, signal) => {
    const scope = openCallScope(signal, TIMEOUT_MS);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: options.model, input: texts }),
        signal: scope.signal,
      });
      const text = await response.text();
      if (!response.ok)
        throw mapHttpFailure('openai-compatible', { status: response.status, message: text.slice(0, 300), codes: [] });
      const body = JSON.parse(text) as { data?: { index?: number; embedding?: number[] }[] };
      return [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding ?? []);
    } catch (error) {
      throw error instanceof AgentError ? error : mapTransportFailure('openai-compatible', error, scope);
    } finally {
      scope.dispose();
    }
  });
}

/** Splits into requests of BATCH texts and checks that every text got one finite vector of one size. */
function batched(
  provider: LlmProviderName,
  model: string,
  logger: Logger,
  request: (texts: readonly string[], kind: EmbedKind, signal: AbortSignal | undefined) => Promise<number[][]>,
): Embedder {
  return {
    provider,
    model,
    async embed(texts, { kind, signal }) {
      const vectors: Float32Array[] = [];
      const started = Date.now();
      for (let i = 0; i < texts.length; i += BATCH) {
        const part = texts.slice(i, i + BATCH);
        const answer = await request(part, kind, signal);
        if (answer.length !== part.length)
          throw llmErrors.invalidOutput(
            provider,
            `${part.length} texts were sent to ${model} for embedding and ${answer.length} vectors came back.`,
          );
        for (const values of answer) {
          if (
            values.length === 0 ||
            values.length !== (vectors[0]?.length ?? values.length) ||
            !values.every(Number.isFinite)
          ) {
            throw llmErrors.invalidOutput(
              provider,
              `${model} returned an embedding that is empty, not numbers, or of another size than the others.`,
            );
          }
          vectors.push(Float32Array.from(values));
        }
      }
      logger.debug(`${provider} embeddings`, { model, texts: texts.length, ms: Date.now() - started });
      return vectors;
    },
  };
}

/** Cosine similarity of two vectors of one size (0 when either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The Gemini provider the tests run against a scripted model server: no retries, nothing logged. */
import { createGeminiProvider } from '../../src/core/llm/gemini';
import type { LlmProvider } from '../../src/core/llm/provider';
import { silentLogger } from '../../src/core/platform/logger';

export const scriptedGemini = (server: { url: string }): LlmProvider =>
  createGeminiProvider({
    model: 'gemini-2.5-flash',
    apiKey: 'test-key',
    baseUrl: server.url,
    logger: silentLogger,
    maxRetries: 0,
  });

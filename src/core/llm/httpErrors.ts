/** HTTP failures of either provider mapped to LlmErrors, so both speak the same error language. */
import { AgentError } from '../platform/errors';
import type { LlmError, LlmProviderName } from './llmError';
import { llmErrors, providerLabel } from './llmError';
import type { CallScope } from './callScope';

export interface HttpFailure {
  status: number;
  /** The provider's own message. */
  message: string;
  /** Provider status/code words (RESOURCE_EXHAUSTED, API_KEY_INVALID, insufficient_quota, ...). */
  codes: string[];
  retryAfterMs?: number;
}

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function mapHttpFailure(provider: LlmProviderName, failure: HttpFailure, cause?: unknown): AgentError {
  const { status, message, retryAfterMs } = failure;
  const words = [message, ...failure.codes].join(' ');
  const detail = truncate(message, 300);
  if (
    status === 401 ||
    status === 403 ||
    (status === 400 && /API_KEY_INVALID|API key (?:not valid|invalid)|invalid api key/i.test(words))
  ) {
    return llmErrors.invalidKey(provider, status, detail, cause);
  }
  if (status === 429) {
    return /quota|insufficient_quota/i.test(words)
      ? llmErrors.quota(provider, detail, retryAfterMs, cause)
      : llmErrors.rateLimited(provider, detail, retryAfterMs, cause);
  }
  if (status === 408 || status >= 500) return llmErrors.server(provider, status, detail, retryAfterMs, cause);
  if (status === 404) {
    return new AgentError(
      'CONFIG_INVALID',
      `${providerLabel(provider)} does not know the requested model or endpoint (HTTP 404: ${detail}).`,
      'Check the model name and base URL in the Postgres Agent model settings.',
      { cause },
    );
  }
  // Other 4xx: the request itself was refused; retrying the same request cannot help.
  return new AgentError(
    'INTERNAL',
    `${providerLabel(provider)} rejected the request (HTTP ${status}: ${detail}). Retrying will not help.`,
    'This is likely a bug or an unsupported option for this model; see the Postgres Agent log.',
    { cause },
  );
}

/** Errors without an HTTP status: cancellation, our time limit, or the network. */
export function mapTransportFailure(provider: LlmProviderName, error: unknown, scope: CallScope): LlmError {
  if (scope.cancelled()) return llmErrors.cancelled(provider, error);
  if (scope.timedOut()) return llmErrors.timeout(provider, scope.timeoutMs, error);
  const message = error instanceof Error ? describeCause(error) : String(error);
  // It answered, but not with JSON (an HTML error page of a proxy, a truncated body): not the network.
  if (error instanceof Error && error.name === 'SyntaxError')
    return llmErrors.invalidOutput(provider, `its answer is not JSON (${message}).`, error);
  return llmErrors.network(provider, message, error);
}

function describeCause(error: Error): string {
  const cause: unknown = error.cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** Failures of a model call, told apart so callers can retry the right ones and people know what to do. */
import { AgentError } from '../platform/errors';

export type LlmProviderName = 'gemini' | 'openai-compatible';

export type LlmErrorKind =
  | 'missing_key'
  | 'invalid_key'
  | 'quota'
  | 'rate_limited'
  | 'safety_block'
  | 'timeout'
  | 'cancelled'
  | 'invalid_output'
  | 'server'
  | 'network';

const PROVIDER_LABEL: Record<LlmProviderName, string> = {
  gemini: 'Gemini',
  'openai-compatible': 'The OpenAI-compatible endpoint',
};

/**
 * A model-call failure. At the AgentError level it is INTERNAL until dedicated codes exist; `kind`
 * is what programs act on, `retryable` says whether trying the same call again can help.
 */
export class LlmError extends AgentError {
  readonly kind: LlmErrorKind;
  readonly provider: LlmProviderName;
  readonly retryable: boolean;
  /** How long the provider asked us to wait (Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;
  /** HTTP status of the provider's answer, when there was one. */
  readonly status: number | undefined;

  constructor(init: {
    kind: LlmErrorKind;
    provider: LlmProviderName;
    message: string;
    advice?: string;
    retryable?: boolean;
    retryAfterMs?: number;
    status?: number;
    cause?: unknown;
  }) {
    super('INTERNAL', init.message, init.advice, { cause: init.cause });
    this.kind = init.kind;
    this.provider = init.provider;
    this.retryable = init.retryable ?? false;
    this.retryAfterMs = init.retryAfterMs;
    this.status = init.status;
  }

  /** The same failure, marked as not worth retrying (e.g. a stream that already delivered text). */
  notRetryable(): LlmError {
    return new LlmError({
      kind: this.kind,
      provider: this.provider,
      message: this.message,
      ...(this.advice === undefined ? {} : { advice: this.advice }),
      retryable: false,
      ...(this.status === undefined ? {} : { status: this.status }),
      cause: this.cause,
    });
  }
}

export function providerLabel(provider: LlmProviderName): string {
  return PROVIDER_LABEL[provider];
}

/** Errors with person-readable wording shared by both providers. */
export const llmErrors = {
  missingKey(provider: LlmProviderName): LlmError {
    return new LlmError({
      kind: 'missing_key',
      provider,
      message: `${providerLabel(provider)} needs an API key and none is set.`,
      advice:
        provider === 'gemini'
          ? 'Set it with Postgres Agent: Set Gemini API Key…, or GEMINI_API_KEY for the CLI.'
          : 'Set the API key of the endpoint, or remove the key requirement on the server.',
    });
  },
  invalidKey(provider: LlmProviderName, status: number, detail: string, cause?: unknown): LlmError {
    return new LlmError({
      kind: 'invalid_key',
      provider,
      status,
      cause,
      message: `${providerLabel(provider)} refused the API key (HTTP ${status}: ${detail}). Retrying will not help.`,
      advice:
        provider === 'gemini'
          ? 'Check the key with Postgres Agent: Set Gemini API Key… (or GEMINI_API_KEY for the CLI); keys are created at https://aistudio.google.com/apikey.'
          : 'Check the API key configured for the OpenAI-compatible endpoint.',
    });
  },
  quota(provider: LlmProviderName, detail: string, retryAfterMs?: number, cause?: unknown): LlmError {
    return new LlmError({
      kind: 'quota',
      provider,
      status: 429,
      retryable: true,
      cause,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      message: `${providerLabel(provider)} quota is exhausted (HTTP 429: ${detail}). Retrying helps only once the quota resets.`,
      advice:
        'Wait for the quota to reset (per-minute quotas reset within a minute, daily quotas the next day), raise the quota or billing tier of the project, or switch to another model.',
    });
  },
  rateLimited(provider: LlmProviderName, detail: string, retryAfterMs?: number, cause?: unknown): LlmError {
    const wait = retryAfterMs === undefined ? '' : ` It asked to wait ${Math.ceil(retryAfterMs / 1000)} s.`;
    return new LlmError({
      kind: 'rate_limited',
      provider,
      status: 429,
      retryable: true,
      cause,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      message: `${providerLabel(provider)} is rate limiting requests (HTTP 429: ${detail}).${wait} Retrying after a pause helps.`,
      advice: 'Try again in a moment, or send fewer requests at once.',
    });
  },
  server(provider: LlmProviderName, status: number, detail: string, retryAfterMs?: number, cause?: unknown): LlmError {
    return new LlmError({
      kind: 'server',
      provider,
      status,
      retryable: true,
      cause,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      message: `${providerLabel(provider)} failed on its side (HTTP ${status}: ${detail}). Retrying usually helps.`,
      advice: 'Try again in a moment; if it keeps failing, check the provider status or switch models.',
    });
  },
  network(provider: LlmProviderName, detail: string, cause?: unknown): LlmError {
    return new LlmError({
      kind: 'network',
      provider,
      retryable: true,
      cause,
      message: `${providerLabel(provider)} could not be reached (${detail}). Retrying may help.`,
      advice: 'Check the network connection and the base URL of the model provider.',
    });
  },
  timeout(provider: LlmProviderName, timeoutMs: number, cause?: unknown): LlmError {
    return new LlmError({
      kind: 'timeout',
      provider,
      cause,
      message: `${providerLabel(provider)} did not answer within the ${timeoutMs} ms time limit of one model call. It was not retried automatically.`,
      advice: 'Try again, or raise postgresAgent.model.timeoutMs if the model is slow (large prompts, local models).',
    });
  },
  cancelled(provider: LlmProviderName, cause?: unknown): LlmError {
    return new LlmError({
      kind: 'cancelled',
      provider,
      cause,
      message: `The ${providerLabel(provider).replace(/^The /, '')} call was cancelled.`,
    });
  },
  safetyBlock(provider: LlmProviderName, reason: string): LlmError {
    return new LlmError({
      kind: 'safety_block',
      provider,
      message: `${providerLabel(provider)} blocked the answer for safety reasons (${reason}). Retrying the same request will not help.`,
      advice: 'Rephrase the request, or leave out the content that may have triggered the filter.',
    });
  },
  invalidOutput(provider: LlmProviderName, detail: string, cause?: unknown): LlmError {
    return new LlmError({
      kind: 'invalid_output',
      provider,
      cause,
      message: `${providerLabel(provider)} returned output that does not match what was asked for: ${detail}`,
      advice: 'Try again, or use a more capable model.',
    });
  },
};

/** The one error type of core: a code a program can act on, a message and advice a person can act on. */
import type { ErrorCode, ErrorInfo } from '../../shared/errorCodes';

export class AgentError extends Error {
  override readonly name = 'AgentError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly advice?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  toInfo(): ErrorInfo {
    return this.advice === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, advice: this.advice };
  }
}

/** Anything thrown, as an AgentError: unknown errors become INTERNAL with their message kept. */
export function toAgentError(error: unknown): AgentError {
  if (error instanceof AgentError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AgentError('INTERNAL', message, undefined, { cause: error });
}

/** "message. advice" for one-line displays (status bar tooltips, CLI stderr). */
export function describeError(error: unknown): string {
  const e = toAgentError(error);
  return e.advice ? `${e.message} ${e.advice}` : e.message;
}

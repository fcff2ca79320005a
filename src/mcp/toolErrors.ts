/** Failures of a tool as the client sees them: an MCP tool error (isError) with our code, message and advice. */
import { ZodError } from 'zod';
import { DbQueryError } from '../core/db/dbErrors';
import { AgentError, toAgentError } from '../core/platform/errors';
import type { ErrorInfo } from '../shared/errorCodes';

export type ToolErrorInfo = ErrorInfo & { position?: number; sqlState?: string };

/** query_canceled (statement_timeout) and lock_not_available (lock_timeout). */
const TIMEOUT_STATES = new Set(['57014', '55P03']);

export function toolErrorInfo(error: unknown): ToolErrorInfo {
  const e =
    error instanceof ZodError
      ? new AgentError(
          'BAD_INPUT',
          `Bad arguments: ${error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ')}.`,
          "Pass exactly the arguments the tool's input schema names.",
        )
      : toAgentError(error);
  if (e instanceof DbQueryError) {
    const position = e.position !== undefined ? { position: e.position } : {};
    if (TIMEOUT_STATES.has(e.sqlState)) {
      return {
        code: 'SQL_TIMEOUT',
        message: `${e.message} (the limit is pg-agent mcp's --timeout-ms; lock waits are limited too).`,
        advice:
          'Nothing was changed. Narrow the query (WHERE, LIMIT, an indexed column), or ask the person to start the server with a larger --timeout-ms.',
        sqlState: e.sqlState,
      };
    }
    return { ...e.toInfo(), sqlState: e.sqlState, ...position };
  }
  const position = 'position' in e && typeof e.position === 'number' ? { position: e.position } : {};
  return { ...e.toInfo(), ...position };
}

/** The text of a tool error: a line for the model, then the same facts as JSON for programs. */
export function toolErrorText(info: ToolErrorInfo): string[] {
  return [
    `Error ${info.code}: ${info.message}${info.advice ? `\n${info.advice}` : ''}`,
    JSON.stringify({ error: info }),
  ];
}

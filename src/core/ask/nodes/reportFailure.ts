/** The end of a run that cannot go on: SQL refused by policy, or still invalid after the repairs. */
import type { ErrorInfo } from '../../../shared/errorCodes';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import type { AskNode } from '../nodeTypes';

export function makeReportFailureNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const refused = state.classification?.decision === 'refuse';
    const error: ErrorInfo = refused
      ? {
          code: 'SQL_REFUSED',
          message: `Refused: ${state.classification?.reasons.join('; ') ?? ''}.`,
          advice: 'This never runs through Postgres Agent; rephrase the question.',
        }
      : {
          code: state.validationError?.sqlState === 'SQL_SYNTAX' ? 'SQL_SYNTAX' : 'DB_QUERY_FAILED',
          message: `The model's SQL is still invalid after ${state.repairAttempts} repairs: ${state.validationError?.message ?? 'unknown error'}`,
          advice: 'Rephrase the question, name the tables and columns, or use a more capable model.',
        };
    await deps.audit.record(threadIdOf(config), {
      type: 'error',
      node: 'reportFailure',
      code: error.code,
      message: error.message,
    });
    return { error };
  };
}

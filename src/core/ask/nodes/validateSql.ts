/**
 * Parse + classify + reach + EXPLAIN (nothing executed): an objection becomes `validationError` for the repair
 * step; a valid check is kept in `checks` for the read or the preview that follows (not made again there).
 */
import { AgentError } from '../../platform/errors';
import { checkSqlParsed } from '../../sql/reach/checkSql';
import type { CarriedChecks } from '../carriedChecks';
import { validateSql } from '../../sql/validate';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';

/** Codes that mean the SQL itself is wrong, which the model may repair. */
const REPAIRABLE = new Set(['SQL_SYNTAX', 'SQL_EMPTY', 'SQL_PLACEHOLDERS']);

export function makeValidateSqlNode(deps: AskDeps, checks: CarriedChecks): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    const sql = state.sql ?? '';
    try {
      let checked;
      try {
        checked = await checkSqlParsed(deps.db, sql);
      } catch (error) {
        if (error instanceof AgentError && REPAIRABLE.has(error.code)) {
          const position =
            'position' in error && typeof error.position === 'number' ? { position: error.position } : {};
          await deps.audit.record(threadId, {
            type: 'sql',
            node: 'validateSql',
            sql,
            outcome: 'invalid',
            detail: error.message,
          });
          return {
            classification: undefined,
            validationError: { sqlState: error.code, message: error.message, ...position },
          };
        }
        throw error;
      }
      const { classification } = checked;
      if (classification.decision === 'refuse') return { classification, validationError: undefined };
      const validation = await validateSql(deps.db, classification, deps.settings.previewTimeoutMs);
      if (validation.ok)
        checks.keep(
          validation.firstPlannedRows === undefined
            ? checked
            : { ...checked, firstPlannedRows: validation.firstPlannedRows },
        );
      await deps.audit.record(threadId, {
        type: 'sql',
        node: 'validateSql',
        sql,
        outcome: validation.ok ? 'valid' : 'invalid',
        ...(validation.ok ? {} : { detail: validation.error.message }),
      });
      return { classification, validationError: validation.ok ? undefined : validation.error };
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'validateSql', error) };
    }
  };
}

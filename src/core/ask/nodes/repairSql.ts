/** The model is shown its previous SQL and PostgreSQL's objection, and writes it again. */
import { llmErrors } from '../../llm/llmError';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { withPasswordsHidden } from '../../sql/secrets/hidePasswords';
import { callStructured } from '../modelCall';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';
import { sqlAnswerSchema, sqlMessages } from '../sqlPrompt';

export function makeRepairSqlNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    const problem = state.validationError;
    try {
      if (!deps.provider) throw llmErrors.missingKey('gemini');
      const objection = problem
        ? `${problem.message}${problem.position === undefined ? '' : ` (at character ${problem.position})`}${problem.hint ? `\nHint: ${problem.hint}` : ''}`
        : 'unknown error';
      const messages = [
        ...sqlMessages(state),
        {
          role: 'assistant' as const,
          content: JSON.stringify({
            sql: state.sql ?? '',
            operation: state.modelClaim?.operation ?? 'read',
            explanation: state.modelClaim?.explanation ?? '',
          }),
        },
        {
          role: 'user' as const,
          content: `PostgreSQL rejected that SQL (SQLSTATE ${problem?.sqlState ?? '?'}): ${objection}\nWrite a corrected statement, using only the tables and columns of the schema above.`,
        },
      ];
      const { value, usage } = await callStructured(
        deps,
        deps.provider,
        threadId,
        'repairSql',
        messages,
        sqlAnswerSchema,
      );
      return {
        sql: await withPasswordsHidden(value.sql),
        modelClaim: { operation: value.operation, explanation: value.explanation },
        validationError: undefined,
        repairAttempts: state.repairAttempts + 1,
        usage,
      };
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'repairSql', error) };
    }
  };
}

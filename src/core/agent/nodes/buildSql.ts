/** The model writes SQL for the question from the schema context (structured: sql, operation, explanation). */
import { llmErrors } from '../../llm/llmError';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { callStructured } from '../modelCall';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';
import { sqlAnswerSchema, sqlMessages } from '../sqlPrompt';

export function makeBuildSqlNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    try {
      if (!deps.provider) throw llmErrors.missingKey('gemini');
      const { value, usage } = await callStructured(deps, deps.provider, threadId, 'buildSql', sqlMessages(state), sqlAnswerSchema);
      return { sql: value.sql, modelClaim: { operation: value.operation, explanation: value.explanation }, validationError: undefined, repairAttempts: 0, usage };
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'buildSql', error) };
    }
  };
}

/**
 * The model writes SQL for the question from the schema context (structured: sql, operation, explanation).
 * When something it needs is missing from the context it may, instead of guessing, ask to look tables up
 * (describe_table / find_tables) up to twice; what they find is added to the context the later steps see.
 */
import { llmErrors } from '../../llm/llmError';
import type { ChatMessage } from '../../llm/provider';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { withPasswordsHidden } from '../../sql/secrets/hidePasswords';
import { callStructured } from '../modelCall';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';
import { describeTablesText, findTablesText } from '../schemaLinking';
import type { SqlOrLookup } from '../sqlPrompt';
import { sqlMessages, sqlOrLookupSchema } from '../sqlPrompt';
import { addUsage, NO_USAGE } from '../state';

const MAX_LOOKUPS = 2;

export function makeBuildSqlNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    try {
      if (!deps.provider) throw llmErrors.missingKey('gemini');
      let context = state.schemaContext ?? { text: '', tables: [] };
      let messages: ChatMessage[] = sqlMessages(state, { lookups: true });
      let usage = NO_USAGE;
      for (let lookups = 0; ; lookups++) {
        const answer = await callStructured(deps, deps.provider, threadId, 'buildSql', messages, sqlOrLookupSchema);
        usage = addUsage(usage, answer.usage);
        const value = answer.value;
        if (value.sql.trim() !== '' || !value.lookup || lookups >= MAX_LOOKUPS) {
          if (value.sql.trim() === '')
            throw llmErrors.invalidOutput(
              deps.provider.name,
              'the model wrote no SQL (it kept asking to look tables up)',
            );
          return {
            sql: await withPasswordsHidden(value.sql),
            modelClaim: { operation: value.operation, explanation: value.explanation },
            validationError: undefined,
            repairAttempts: 0,
            usage,
            ...(context === state.schemaContext ? {} : { schemaContext: context }),
          };
        }
        const found = await lookUp(deps, value.lookup);
        deps.logger.info('schema lookup by the SQL step', {
          thread: threadId,
          describe: (value.lookup.describe ?? []).join(', '),
          find: (value.lookup.find ?? []).join(', '),
          found: found.tables.length,
        });
        context = {
          text: [context.text, found.definitions].filter((t) => t !== '').join('\n'),
          tables: [...new Set([...context.tables, ...found.tables])],
        };
        messages = [
          ...messages,
          { role: 'assistant', content: JSON.stringify(value) },
          { role: 'user', content: `Lookup results:\n${found.report}\nNow write the SQL (or ask for another lookup).` },
        ];
      }
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'buildSql', error) };
    }
  };
}

/** Runs describe_table and find_tables on the cached schema; tables described join the context. */
async function lookUp(
  deps: AskDeps,
  lookup: NonNullable<SqlOrLookup['lookup']>,
): Promise<{ report: string; definitions: string; tables: string[] }> {
  const snapshot = await deps.loadSnapshot();
  const parts: string[] = [];
  let definitions = '';
  let tables: string[] = [];
  if (lookup.describe && lookup.describe.length > 0) {
    const described = describeTablesText(snapshot, lookup.describe);
    definitions = described.text
      .split('\n')
      .filter((line) => !line.startsWith('No table named:'))
      .join('\n');
    tables = described.found;
    parts.push(`describe_table(${lookup.describe.join(', ')}):\n${described.text || '(nothing)'}`);
  }
  for (const words of lookup.find ?? []) {
    parts.push(`find_tables("${words}"):\n${findTablesText(snapshot, words) || '(no table matches)'}`);
  }
  return { report: parts.join('\n\n'), definitions, tables };
}

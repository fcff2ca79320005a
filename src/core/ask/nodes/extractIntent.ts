/**
 * First step: what the question asks for (operation, tables, confidence); a static guess without a model.
 * The model picks the tables from a compact list of the schema (one short line per table, the likeliest
 * first, cut to the context budget): the first stage of linking; gatherContext builds the detail around them.
 */
import { z } from 'zod';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { callStructured } from '../modelCall';
import type { AskNode } from '../nodeTypes';
import { compactSchemaList } from '../schemaLinking';
import type { Intent } from '../state';

const DEFAULT_BUDGET = 6000;

const intentSchema = z.object({
  operation: z.enum(['read', 'write', 'unknown']),
  tables: z.array(z.string()),
  confidence: z.number().min(0).max(1),
});

const WRITE_WORDS = /\b(delete|remove|update|change|set|insert|add|create|drop|truncate|rename|cancel|mark)\b/i;

/** Without a model: write words mean write, table names found in the question are the tables. */
export function staticIntent(question: string, tableNames: readonly string[]): Intent {
  const lower = question.toLowerCase();
  const tables = tableNames.filter((name) => lower.includes(name.toLowerCase()));
  return { operation: WRITE_WORDS.test(question) ? 'write' : 'read', tables, confidence: 0, source: 'fallback' };
}

export function makeExtractIntentNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const snapshot = await deps.loadSnapshot();
    const tableNames = snapshot.tables.map((t) => t.name);
    const provider = deps.provider;
    if (!provider) return { intent: staticIntent(state.question, tableNames) };
    const threadId = threadIdOf(config);
    const list = compactSchemaList(snapshot, state.question, deps.contextBudgetTokens ?? DEFAULT_BUDGET);
    try {
      const { value, usage } = await callStructured(
        deps,
        provider,
        threadId,
        'extractIntent',
        [
          {
            role: 'system',
            content:
              'Classify a question about a PostgreSQL database. Reply with JSON: operation ("read" when it only asks to see data, ' +
              '"write" when it asks to change data or schema, "unknown"), tables (the names, exactly as listed, of every table the answer ' +
              'needs, including the tables that join them), confidence (0..1).\n' +
              `Tables (${list.listed === list.total ? 'all' : `the ${list.listed} likeliest of ${list.total}`}; "+N like it" marks a family of same-column tables):\n${list.text}`,
          },
          { role: 'user', content: state.question },
        ],
        intentSchema,
      );
      return { intent: { ...value, source: 'model' }, usage };
    } catch (error) {
      // The intent only steers context ranking: a static guess keeps the run going.
      deps.logger.warn('intent extraction failed; using the static fallback', {
        thread: threadId,
        error: error instanceof Error ? error.message : String(error),
      });
      return { intent: staticIntent(state.question, tableNames) };
    }
  };
}

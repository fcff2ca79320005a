/** A short answer in words from the rows; optional (skipped without a model, a failure only logged). */
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { callText, untrustedData } from '../modelCall';
import type { AskNode } from '../nodeTypes';

const ROWS_SHOWN = 50;

export function makeSummarizeNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const { provider } = deps;
    const result = state.result;
    if (!provider || !result) return {};
    const threadId = threadIdOf(config);
    const table = [
      result.fields.map((f) => f.name).join('\t'),
      ...result.rows.slice(0, ROWS_SHOWN).map((row) => row.map((v) => JSON.stringify(v)).join('\t')),
    ].join('\n');
    const more =
      result.rows.length > ROWS_SHOWN || result.truncated
        ? `\n(only the first ${Math.min(ROWS_SHOWN, result.rows.length)} rows are shown)`
        : '';
    try {
      const { value, usage } = await callText(
        deps,
        provider,
        threadId,
        'summarize',
        [
          {
            role: 'system',
            content: 'Answer the question in one or two plain sentences from the query result. Do not invent numbers.',
          },
          {
            role: 'user',
            content: `Question: ${state.question}\nSQL: ${state.sql ?? ''}\nResult (${result.rowCount} rows):\n${untrustedData(table)}${more}`,
          },
        ],
        deps.onSummaryText,
      );
      return { summary: value.trim(), usage };
    } catch (error) {
      deps.logger.warn('summary skipped: the model call failed', {
        thread: threadId,
        error: error instanceof Error ? error.message : String(error),
      });
      return {};
    }
  };
}

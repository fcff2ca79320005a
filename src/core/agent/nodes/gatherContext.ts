/** The schema the model is shown: tables ranked against the question (and the intent's tables), cut to a budget. */
import { buildSchemaContext } from '../schemaContext';
import type { AskDeps } from '../deps';
import type { AskNode } from '../nodeTypes';

const DEFAULT_BUDGET = 6000;

export function makeGatherContextNode(deps: AskDeps): AskNode {
  return async (state) => {
    const snapshot = await deps.loadSnapshot();
    const query = [state.question, ...(state.intent?.tables ?? [])].join(' ');
    const context = buildSchemaContext(snapshot, query, { budgetTokens: deps.contextBudgetTokens ?? DEFAULT_BUDGET });
    return { schemaContext: { text: context.text, tables: context.tables.map((t) => `${t.schema}.${t.name}`) } };
  };
}

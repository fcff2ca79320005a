/**
 * The schema the model is shown: tables ranked against the question, cut to a budget. The tables the
 * model picked from the compact list (extractIntent) come first, with the tables that join them.
 */
import { buildSchemaContext } from '../schemaContext';
import { semanticScores } from '../semanticSignal';
import type { AskDeps } from '../deps';
import type { AskNode } from '../nodeTypes';

const DEFAULT_BUDGET = 6000;

export function makeGatherContextNode(deps: AskDeps): AskNode {
  return async (state) => {
    const snapshot = await deps.loadSnapshot();
    const pinned = state.intent?.source === 'model' ? state.intent.tables : [];
    const semantic = deps.embeddings
      ? await semanticScores(snapshot, state.question, deps.embeddings, deps.logger)
      : undefined;
    const context = buildSchemaContext(snapshot, state.question, {
      budgetTokens: deps.contextBudgetTokens ?? DEFAULT_BUDGET,
      pinned,
      ...(semantic ? { semantic } : {}),
    });
    return { schemaContext: { text: context.text, tables: context.tables.map((t) => `${t.schema}.${t.name}`) } };
  };
}

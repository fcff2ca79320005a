/** `schema_context(question)`: the tables and columns our own agent would show its model for a question. */
import { z } from 'zod';
import { untrustedData } from '../../core/ask/modelCall';
import { buildSchemaContext } from '../../core/ask/schemaContext';
import { AgentError } from '../../core/platform/errors';
import { contextJson } from '../../core/present/outputJson';
import { defineTool, READ_HINTS } from '../toolSpec';

export const schemaContextTool = defineTool({
  name: 'schema_context',
  title: 'Schema context for a question',
  description:
    'The tables and columns that matter for a question in plain words, ranked best first and bounded by a token budget, ' +
    'with their compact definitions (columns, keys, references). Start here before writing SQL on a large schema.',
  annotations: READ_HINTS,
  input: {
    question: z
      .string()
      .max(4000)
      .describe('The question or task in plain words, e.g. "revenue per customer last month".'),
  },
  output: {
    tables: z.array(
      z.looseObject({ schema: z.string(), name: z.string(), score: z.number(), columns: z.array(z.string()) }),
    ),
    tokens: z.number(),
    budget: z.number(),
    schemaTokens: z.number(),
  },
  async run(context, { question }) {
    if (question.trim() === '')
      throw new AgentError('BAD_INPUT', 'The question is empty.', 'Pass the question or task in plain words.');
    const options = { budgetTokens: context.contextBudget };
    // Through the stored linking index when the server has one (pg-agent mcp), else built over the snapshot.
    const built = context.loadContext
      ? await context.loadContext(question, options)
      : buildSchemaContext(await context.loadSchema(), question, options);
    const structured = contextJson(built);
    const text =
      built.tables.length === 0
        ? 'No table matches the question. Call list_tables to see them all.'
        : `${built.tables.length} table(s), best first (${built.tokens} of ${built.budget} tokens):\n${untrustedData(built.text)}`;
    return { structured, text };
  },
});

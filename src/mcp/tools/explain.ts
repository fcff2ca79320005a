/** `explain(sql)`: the planner's plan, EXPLAIN without ANALYZE inside READ ONLY; a write is planned, never run. */
import { z } from 'zod';
import { explainSql } from '../../core/jobs/phases/readTools';
import { classifySqlArg, refusedError } from '../classifySqlArg';
import { readToolContext } from '../readToolContext';
import { READ_OUTPUT, readJson } from '../sqlResult';
import { defineTool, READ_HINTS } from '../toolSpec';

export const explainTool = defineTool({
  name: 'explain',
  title: 'Explain a statement',
  description:
    'The query plan of one SELECT, INSERT, UPDATE, DELETE or MERGE (EXPLAIN without ANALYZE, in a READ ONLY transaction): ' +
    'nothing is executed, writes included. Pass the statement itself, without EXPLAIN. For the exact rows a write would change, call impact.',
  annotations: READ_HINTS,
  input: { sql: z.string().max(100_000).describe('One statement, without EXPLAIN.') },
  output: READ_OUTPUT,
  async run(context, { sql }) {
    const classification = await classifySqlArg(sql, await context.openDb());
    if (classification.decision === 'refuse') throw refusedError(classification);
    const plan = await explainSql(await readToolContext(context), sql);
    const lines = plan.split('\n');
    // The shape of `pg-agent sql --json -- "EXPLAIN …"`: one text column, a row per plan line.
    const structured = readJson(classification, {
      fields: [{ name: 'QUERY PLAN', type: 'text' }],
      rows: lines.map((l) => [l]),
      rowCount: lines.length,
      truncated: false,
    });
    return { structured, text: `Query plan (estimates; nothing was executed):\n${plan}` };
  },
});

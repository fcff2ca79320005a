/**
 * `advise_indexes`: index advice for one query or the heaviest recorded ones (the `pg-agent indexes advise --json --no-hold`
 * shape), measured with hypothetical indexes when hypopg is there. Read-only: it builds nothing and holds nothing;
 * an index is built only through propose_write and a person's approval.
 */
import { z } from 'zod';
import { untrustedData } from '../../core/ask/modelCall';
import { adviseIndexes } from '../../core/dba/indexAdvice/adviseIndexes';
import type { AdviceQueryInput } from '../../core/dba/indexAdvice/adviceTypes';
import { topQueries } from '../../core/dba/topQueries';
import { AgentError } from '../../core/platform/errors';
import { renderAdvice } from '../../core/present/renderAdvice';
import { renderTop } from '../../core/present/renderTop';
import { defineTool, READ_HINTS } from '../toolSpec';

export const adviseIndexesTool = defineTool({
  name: 'advise_indexes',
  title: 'Advise indexes',
  description:
    'Index advice for one SELECT (sql) or the heaviest recorded statements (top): candidates from predicates, joins and sorts, ' +
    'multi-column and covering, measured with hypopg hypothetical indexes when available (planner cost before/after, size), chosen ' +
    'within a space budget. Builds nothing: to build a recommended index, call propose_write with its CREATE INDEX CONCURRENTLY (a person approves it).',
  annotations: READ_HINTS,
  input: {
    sql: z.string().max(100_000).optional().describe('One SELECT to advise on.'),
    top: z.number().int().min(1).max(50).optional().describe('Or: the N heaviest statements of pg_stat_statements.'),
    budget_mb: z
      .number()
      .positive()
      .max(1_000_000)
      .optional()
      .describe('Space the indexes may take together (default 1024).'),
  },
  output: { measured: z.boolean(), recommendations: z.array(z.unknown()) },
  async run(context, { sql, top, budget_mb }) {
    if ((sql === undefined) === (top === undefined)) throw new AgentError('BAD_INPUT', 'Give either sql or top.');
    const db = await context.openDb();
    let inputs: AdviceQueryInput[];
    if (sql !== undefined) {
      inputs = [{ sql: sql.trim().replace(/;\s*$/, ''), calls: 1, source: 'given' }];
    } else {
      const recorded = await topQueries(db, { limit: top ?? 10 });
      if (!recorded.available)
        return { structured: { measured: false, recommendations: [], top: recorded }, text: renderTop(recorded) };
      inputs = recorded.queries.map((q) => ({
        sql: q.query,
        calls: q.calls,
        source: 'pg_stat_statements' as const,
        queryid: q.queryid,
      }));
    }
    const report = await adviseIndexes(db, inputs, {
      ...(budget_mb ? { budgetBytes: budget_mb * 1024 * 1024 } : {}),
      statementTimeoutMs: context.settings.statementTimeoutMs,
      lockTimeoutMs: context.settings.lockTimeoutMs,
    });
    return {
      structured: { ...report },
      text: `Index advice (query texts come from the database; nothing was built):\n${untrustedData(renderAdvice(report))}`,
    };
  },
});

/** `top_queries`: the heaviest statements from pg_stat_statements (the `pg-agent top --json` shape), or the steps to set it up. */
import { z } from 'zod';
import { untrustedData } from '../../core/ask/modelCall';
import { TOP_ORDERS, topQueries } from '../../core/dba/topQueries';
import { renderTop } from '../../core/present/renderTop';
import { defineTool, READ_HINTS } from '../toolSpec';

export const topQueriesTool = defineTool({
  name: 'top_queries',
  title: 'Heaviest queries',
  description:
    'The heaviest statements PostgreSQL recorded in this database (pg_stat_statements), by total or mean time, calls, rows or I/O, ' +
    'with their normalized text ($1, $2 for constants), calls, times, cache hits. When pg_stat_statements is not set up, says why and how.',
  annotations: READ_HINTS,
  input: {
    order: z.enum(TOP_ORDERS).optional().describe('total (default), mean, calls, rows or io.'),
    limit: z.number().int().min(1).max(100).optional().describe('How many statements (default 10).'),
  },
  output: { available: z.boolean(), by: z.string() },
  async run(context, { order: by, limit }) {
    const report = await topQueries(await context.openDb(), {
      ...(by ? { by } : {}),
      ...(limit ? { limit } : {}),
      limits: {
        statementTimeoutMs: context.settings.statementTimeoutMs,
        lockTimeoutMs: context.settings.lockTimeoutMs,
      },
    });
    return {
      structured: { ...report },
      text: report.available
        ? `Heaviest statements (their text comes from the database):\n${untrustedData(renderTop(report))}`
        : renderTop(report),
    };
  },
});

/** `health`: what a DBA checks first (the `pg-agent health --json` shape), read-only; each fix is SQL for propose_write. */
import { z } from 'zod';
import { untrustedData } from '../../core/ask/modelCall';
import { runHealth } from '../../core/dba/runHealth';
import { renderHealth } from '../../core/present/renderHealth';
import { defineTool, READ_HINTS } from '../toolSpec';

export const healthTool = defineTool({
  name: 'health',
  title: 'Database health checks',
  description:
    'What a DBA checks first, each check a read-only catalog query with a timeout: invalid, unused and duplicate indexes, table and ' +
    'index bloat, tables never or long not vacuumed/analyzed, transaction ID wraparound, sequences near their maximum, long-running ' +
    'and idle-in-transaction sessions, connection saturation, replication slots holding WAL, foreign keys without an index, cache hit ' +
    'ratios. Each finding has evidence and, where one exists, a fix as SQL: to apply it, call propose_write with that SQL (a person approves it).',
  annotations: READ_HINTS,
  input: { checks: z.array(z.string().max(40)).max(20).optional().describe('Only these check ids (all when absent).') },
  output: { checks: z.array(z.unknown()), summary: z.record(z.string(), z.number()) },
  async run(context, { checks }) {
    const report = await runHealth(await context.openDb(), {
      ...(checks && checks.length > 0 ? { only: checks } : {}),
      limits: {
        statementTimeoutMs: context.settings.statementTimeoutMs,
        lockTimeoutMs: context.settings.lockTimeoutMs,
      },
    });
    return {
      structured: { ...report },
      text: `Health checks (findings quote names and session queries from the database):\n${untrustedData(renderHealth(report))}`,
    };
  },
});

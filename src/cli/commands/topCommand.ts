/** `pg-agent top`: the heaviest statements from pg_stat_statements, or how to set it up. */
import { DEFAULT_CATALOG_LIMITS } from '../../core/dba/catalogRead';
import type { TopOrder } from '../../core/dba/topQueries';
import { TOP_ORDERS, topQueries } from '../../core/dba/topQueries';
import { AgentError } from '../../core/platform/errors';
import { renderTop } from '../../core/present/renderTop';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';

export const topCommand: CliCommand = {
  name: 'top',
  summary: 'the heaviest queries PostgreSQL recorded (pg_stat_statements), with their normalized text',
  usage: 'pg-agent top [--by total|mean|calls|rows|io] [--limit N] [flags]',
  options: { by: { type: 'string' }, limit: { type: 'string' } },
  optionsHelp: `  --by ORDER          total (default), mean, calls, rows or io (blocks read + temp blocks written)
  --limit N           how many statements (default 10, at most 500)`,
  description:
    'Reads pg_stat_statements in a READ ONLY transaction. Without it, prints the steps to set it up and exits 1.',
  async run({ args, io, openDb }) {
    const by = parseBy(args.options.by);
    const limit = parseLimit(args.options.limit);
    const db = await openDb();
    const report = await topQueries(db, {
      by,
      limit,
      limits: {
        ...DEFAULT_CATALOG_LIMITS,
        ...(args.flags.timeoutMs !== undefined ? { statementTimeoutMs: args.flags.timeoutMs } : {}),
      },
    });
    io.stdout(args.flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderTop(report)}\n`);
    return report.available ? EXIT.ok : EXIT.failed;
  },
};

function parseBy(value: string | boolean | undefined): TopOrder {
  if (value === undefined) return 'total';
  const found = TOP_ORDERS.find((o) => o === value);
  if (!found) throw new AgentError('BAD_INPUT', `--by takes ${TOP_ORDERS.join(', ')}; not "${String(value)}".`);
  return found;
}

export function parseLimit(value: string | boolean | undefined, fallback = 10): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 500)
    throw new AgentError('BAD_INPUT', `--limit takes a whole number from 1 to 500; not "${String(value)}".`);
  return n;
}

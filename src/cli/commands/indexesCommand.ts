/**
 * `pg-agent indexes advise [--query SQL | --top N]`: index advice for one query or the heaviest recorded ones,
 * measured with hypopg when available; each recommended index goes through the SQL path as a held write (exit 3).
 */
import type { AdviceQueryInput } from '../../core/dba/indexAdvice/adviceTypes';
import { adviseIndexes } from '../../core/dba/indexAdvice/adviseIndexes';
import { holdRecommendations } from '../../core/dba/indexAdvice/holdAdvice';
import { topQueries } from '../../core/dba/topQueries';
import { AgentError } from '../../core/platform/errors';
import { renderAdvice } from '../../core/present/renderAdvice';
import { renderTop } from '../../core/present/renderTop';
import type { CliCommand } from '../command';
import { requesterOf } from '../decider';
import { EXIT } from '../exitCodes';
import { cliPolicy } from '../sqlInput';
import { parseLimit } from './topCommand';

export const indexesCommand: CliCommand = {
  name: 'indexes',
  summary: 'index advice for a query or the heaviest ones, measured with hypopg; each index a held write',
  usage:
    'pg-agent indexes advise [--query SQL | --top N] [--budget-mb N] [--min-gain PCT] [--max N] [--no-hold] [flags]',
  options: {
    query: { type: 'string' },
    top: { type: 'string' },
    'budget-mb': { type: 'string' },
    'min-gain': { type: 'string' },
    max: { type: 'string' },
    'no-hold': { type: 'boolean' },
    by: { type: 'string' },
  },
  optionsHelp: `  --query SQL         advise for this query (or give it after --)
  --top N             advise for the N heaviest statements of pg_stat_statements (by total time)
  --budget-mb N       space the recommended indexes may take together (default 1024)
  --min-gain PCT      an index must save at least this % of the planner cost of the queries it serves (default 10)
  --max N             at most N indexes (default 5)
  --no-hold           only list the recommendations; do not submit them for approval
  --by NAME           who asks (recorded on the tickets)`,
  description:
    "Candidates come from the query's predicates, joins and sort (PostgreSQL's parser), multi-column and covering ones\n" +
    'included. With the hypopg extension each is measured as a hypothetical index (planner cost before/after, size),\n' +
    'and the best are picked greedily within the budget. Without it they are ranked by heuristics, "not measured".\n' +
    'Each recommended CREATE INDEX CONCURRENTLY is held for approval (exit 3, tickets in the output).',
  async run(context) {
    const { args, io } = context;
    const [sub, ...rest] = args.positionals;
    if (sub !== 'advise')
      throw new AgentError(
        'BAD_INPUT',
        sub === undefined ? 'Say what to do: pg-agent indexes advise …' : `Unknown indexes command "${sub}".`,
        'Usage: pg-agent indexes advise [--query SQL | --top N]',
      );
    const given =
      typeof args.options.query === 'string' ? args.options.query : rest.length > 0 ? rest.join(' ') : undefined;
    const top = args.options.top === undefined ? undefined : parseLimit(args.options.top);
    if ((given === undefined) === (top === undefined))
      throw new AgentError('BAD_INPUT', 'Give either --query SQL or --top N.', 'e.g. pg-agent indexes advise --top 20');
    if (given !== undefined && given.trim() === '') throw new AgentError('SQL_EMPTY', 'The query is empty.');
    const budgetMb = positive(args.options['budget-mb'], '--budget-mb', 1024);
    const minGain = positive(args.options['min-gain'], '--min-gain', 10) / 100;
    const maxIndexes = Math.floor(positive(args.options.max, '--max', 5));
    const db = await context.openDb();
    let inputs: AdviceQueryInput[];
    if (given !== undefined) {
      inputs = [{ sql: given.trim().replace(/;\s*$/, ''), calls: 1, source: 'given' }];
    } else {
      const report = await topQueries(db, { by: 'total', limit: top ?? 10 });
      if (!report.available) {
        io.stderr(`${renderTop(report)}\n`);
        return EXIT.failed;
      }
      inputs = report.queries.map((q) => ({
        sql: q.query,
        calls: q.calls,
        source: 'pg_stat_statements' as const,
        queryid: q.queryid,
      }));
    }
    let report = await adviseIndexes(db, inputs, {
      budgetBytes: budgetMb * 1024 * 1024,
      minGain,
      maxIndexes,
      ...(args.flags.timeoutMs !== undefined ? { statementTimeoutMs: args.flags.timeoutMs } : {}),
    });
    if (
      given !== undefined &&
      report.queries[0]?.skipped &&
      /^(not a|\d+ statements)/.test(report.queries[0].skipped)
    ) {
      throw new AgentError(
        'SQL_REFUSED',
        `No advice: ${report.queries[0].skipped}.`,
        'Index advice plans a single plain SELECT.',
      );
    }
    let held = false;
    if (args.options['no-hold'] !== true && report.recommendations.length > 0) {
      const { settings } = await cliPolicy(context);
      const store = await context.openTicketStore();
      const submitted = await holdRecommendations(db, store, report, {
        connection: await context.connectionKey(),
        requestedBy: await requesterOf(context),
        settings,
        logger: context.logger,
      });
      report = submitted.report;
      held = submitted.outcomes.some((o) => o.status === 'held');
    }
    io.stdout(args.flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderAdvice(report)}\n`);
    return held ? EXIT.held : EXIT.ok;
  },
};

function positive(value: string | boolean | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!(n > 0)) throw new AgentError('BAD_INPUT', `${flag} takes a positive number; not "${String(value)}".`);
  return n;
}

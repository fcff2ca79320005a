/**
 * The DBA tools of a job's agent (issue 26): health checks, the heaviest recorded queries and index advice, all
 * read-only (catalog reads, EXPLAIN with hypothetical indexes). A fix or an index becomes a todo whose SQL goes
 * through run_sql, where it is held for a person like any write. The reports go to the model as their JSON (the
 * CLI's --json shape), delimited as untrusted data: names and query texts come from the database.
 */
import { untrustedData } from '../../ask/modelCall';
import { adviseIndexes } from '../../dba/indexAdvice/adviseIndexes';
import type { AdviceQueryInput } from '../../dba/indexAdvice/adviceTypes';
import { runHealth } from '../../dba/runHealth';
import type { TopOrder } from '../../dba/topQueries';
import { topQueries } from '../../dba/topQueries';
import { AgentError } from '../../platform/errors';
import type { ReadToolContext } from './readTools';

const limitsOf = (context: ReadToolContext) => ({
  statementTimeoutMs: context.settings.statementTimeoutMs,
  lockTimeoutMs: context.settings.lockTimeoutMs,
});

export async function dbHealth(context: ReadToolContext, checks: readonly string[] | undefined): Promise<string> {
  const report = await runHealth(context.db, {
    ...(checks && checks.length > 0 ? { only: checks } : {}),
    limits: limitsOf(context),
  });
  // Checks that found nothing are summed up, so the findings fit in what the model is shown.
  const checksRun = report.checks.map(({ id, status, findings, note }) => ({
    id,
    status,
    ...(note ? { note } : {}),
    ...(findings.length > 0 ? { findings } : {}),
  }));
  return `Health checks. To apply a fix, put its SQL in a todo and run it with run_sql (a person approves it).\n${untrustedData(JSON.stringify({ summary: report.summary, checks: checksRun }))}`;
}

export async function topQueriesText(
  context: ReadToolContext,
  by: TopOrder | undefined,
  limit: number | undefined,
): Promise<string> {
  const report = await topQueries(context.db, {
    ...(by ? { by } : {}),
    ...(limit ? { limit } : {}),
    limits: limitsOf(context),
  });
  return untrustedData(JSON.stringify(report));
}

export async function adviseIndexesText(
  context: ReadToolContext,
  sql: string | undefined,
  top: number | undefined,
): Promise<string> {
  if ((sql === undefined) === (top === undefined))
    throw new AgentError('BAD_INPUT', 'advise_indexes takes either sql or top.');
  let inputs: AdviceQueryInput[];
  if (sql !== undefined) {
    inputs = [{ sql: sql.trim().replace(/;\s*$/, ''), calls: 1, source: 'given' }];
  } else {
    const recorded = await topQueries(context.db, { limit: top ?? 10, limits: limitsOf(context) });
    if (!recorded.available) return JSON.stringify(recorded);
    inputs = recorded.queries.map((q) => ({
      sql: q.query,
      calls: q.calls,
      source: 'pg_stat_statements' as const,
      queryid: q.queryid,
    }));
  }
  const report = await adviseIndexes(context.db, inputs, limitsOf(context));
  return `Index advice (nothing was built). A recommended index is built only by a todo running its CREATE INDEX CONCURRENTLY through run_sql, after a person approves it.\n${untrustedData(JSON.stringify(report))}`;
}

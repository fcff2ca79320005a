/**
 * Runs one tool call of the job's agent. Arguments are checked (the model is untrusted); failures come
 * back as a tool error the model can act on; a write asked for with run_sql is not run but held.
 */
import { lintForModel } from '../../sql/ddl/lint';
import { toAgentError } from '../../platform/errors';
import type { ToolCall } from '../../llm/provider';
import { runSql } from '../../sql/runSql';
import type { JobGraphDeps } from './jobGraphDeps';
import { commitJob } from './jobHistoryCommit';
import { takeOverLiveTicket } from './liveTickets';
import type { PendingWrite, PhaseEnd } from './jobState';
import type { Phase, ToolName } from './jobTools';
import { TOOL_ARGS, TOOLS, isToolName } from './jobTools';
import {
  countRows,
  describeTable,
  explainSql,
  findTables,
  listTables,
  rowsForModel,
  runReadSql,
  sampleRows,
} from './readTools';
import type { ReadToolContext } from './readTools';
import { adviseIndexesText, dbHealth, topQueriesText } from './dbaTools';
import type { TopOrder } from '../../dba/topQueries';
import { updateTodo, writePlan, writeTodos, writeWorkspace } from './workspaceTools';
import type { ColumnSet, TruncatedRead } from './jobWriteFindings';
import { jobWriteFindings } from './jobWriteFindings';

/** What the job did before that a write it proposes is checked against (issue 25), and where new cut reads go. */
export interface JobMemory {
  truncatedReads: readonly TruncatedRead[];
  columnsSet: readonly ColumnSet[];
  onTruncated: (read: TruncatedRead) => void;
}

const NO_MEMORY: JobMemory = { truncatedReads: [], columnsSet: [], onTruncated: () => undefined };

export type ToolOutcome =
  | { kind: 'result'; ok: boolean; content: string }
  | { kind: 'end'; end: PhaseEnd; content: string }
  | { kind: 'held'; write: Omit<PendingWrite, 'toolCallId' | 'toolName' | 'laterCalls'>; content: string };

/** Longest tool result the model is given; the rest is cut with a note. */
const RESULT_LIMIT = 12_000;

export function clip(text: string, limit = RESULT_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}\n… (${text.length - limit} more characters cut)`;
}

const json = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value, null, 1));

export async function runTool(
  deps: JobGraphDeps,
  jobId: string,
  phase: Phase,
  call: ToolCall,
  memory: JobMemory = NO_MEMORY,
): Promise<ToolOutcome> {
  if (!isToolName(call.name) || !TOOLS[call.name].phases.includes(phase)) {
    return { kind: 'result', ok: false, content: `Error: there is no tool "${call.name}" in the ${phase} phase.` };
  }
  const name: ToolName = call.name;
  const parsed = TOOL_ARGS[name].safeParse(call.args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      kind: 'result',
      ok: false,
      content: `Error: bad arguments for ${name}: ${issue ? `${issue.path.join('.') || 'arguments'}: ${issue.message}` : 'invalid'}.`,
    };
  }
  try {
    return await dispatch(deps, jobId, name, parsed.data, memory);
  } catch (error) {
    const e = toAgentError(error);
    return { kind: 'result', ok: false, content: `Error (${e.code}): ${e.message}${e.advice ? ` ${e.advice}` : ''}` };
  }
}

async function dispatch(
  deps: JobGraphDeps,
  jobId: string,
  name: ToolName,
  args: Record<string, unknown>,
  memory: JobMemory,
): Promise<ToolOutcome> {
  const onTruncated = (rows: number, tables: string[]) => memory.onTruncated({ rows, tables });
  const read: ReadToolContext = { db: deps.db, settings: deps.settings, loadSnapshot: deps.loadSnapshot, onTruncated };
  const ok = (value: unknown): ToolOutcome => ({ kind: 'result', ok: true, content: clip(json(value)) });
  const str = (key: string): string => {
    const value = args[key];
    return typeof value === 'string' ? value : '';
  };
  const files = (value: string): ToolOutcome => {
    deps.emit({ type: 'files', jobId });
    return ok(value);
  };
  switch (name) {
    case 'list_tables':
      return ok(await listTables(read));
    case 'describe_table':
      return ok(await describeTable(read, str('table')));
    case 'find_tables':
      return ok(await findTables(read, str('words')));
    case 'sample_rows':
      return ok(await sampleRows(read, str('table'), typeof args.limit === 'number' ? args.limit : undefined));
    case 'count_rows':
      return ok(await countRows(read, str('table'), typeof args.where === 'string' ? args.where : undefined));
    case 'run_read_sql':
      return ok(await runReadSql(read, str('sql')));
    case 'explain_sql':
      return ok(await explainSql(read, str('sql')));
    case 'db_health':
      return ok(await dbHealth(read, Array.isArray(args.checks) ? (args.checks as string[]) : undefined));
    case 'top_queries':
      return ok(
        await topQueriesText(
          read,
          typeof args.order === 'string' ? (args.order as TopOrder) : undefined,
          typeof args.limit === 'number' ? args.limit : undefined,
        ),
      );
    case 'advise_indexes':
      return ok(
        await adviseIndexesText(
          read,
          typeof args.sql === 'string' ? args.sql : undefined,
          typeof args.top === 'number' ? args.top : undefined,
        ),
      );
    case 'write_workspace':
      return files(await writeWorkspace(deps.store, jobId, str('content')));
    case 'write_plan':
      return files(await writePlan(deps.store, jobId, str('content')));
    case 'write_todos':
      return files(await writeTodos(deps.store, jobId, args.todos as Parameters<typeof writeTodos>[2]));
    case 'update_todo': {
      const todo = await updateTodo(deps.store, jobId, str('id'), str('status'));
      if (todo.status === 'done') await commitJob(deps, jobId, `Todo ${todo.id} done: ${todo.title}`);
      return files(`Todo ${todo.id} is now ${todo.status}.`);
    }
    case 'run_sql':
      return runSqlTool(deps, jobId, str('sql'), typeof args.todo_id === 'string' ? args.todo_id : null, memory);
    case 'plan_ready':
      return {
        kind: 'end',
        end: { kind: 'plan_ready', summary: str('summary') },
        content: 'The strategic phase ends here.',
      };
    case 'finish_phase':
      return {
        kind: 'end',
        end: { kind: 'finish_phase', summary: str('summary') },
        content: 'The tactical phase ends here.',
      };
    case 'job_complete':
      return { kind: 'end', end: { kind: 'job_complete', summary: str('summary') }, content: 'The job ends here.' };
    case 'job_failed':
      return {
        kind: 'end',
        end: { kind: 'job_failed', reason: str('reason') },
        content: 'The job ends here, marked failed.',
      };
  }
}

/** The safety path for the agent's SQL: a read runs; a write gets its impact and a ticket and waits. */
async function runSqlTool(
  deps: JobGraphDeps,
  jobId: string,
  sql: string,
  todoId: string | null,
  memory: JobMemory,
): Promise<ToolOutcome> {
  // After a crash the same write may be asked for again: its pending ticket is picked up, never doubled.
  const live = await takeOverLiveTicket(deps, jobId, sql, todoId);
  if (live) {
    await deps.audit(jobId, {
      type: 'sql',
      node: 'tacticalTools',
      sql,
      outcome: 'held',
      detail: `ticket ${live.ticket.id} picked up again (${live.sqlFile})`,
    });
    return {
      kind: 'held',
      write: { ticketId: live.ticket.id, sql, sqlFile: live.sqlFile, impact: live.ticket.impact, todoId },
      content: `Held for a person's approval (ticket ${live.ticket.id}, risk ${live.ticket.impact.risk}; proposed before the job was restarted).${lintForModel(live.ticket.impact.lint)}`,
    };
  }
  // Issue 25: a write planned from a cut read, or filtering on a column this job just set, says so and is one level up.
  const contextLint = jobWriteFindings(sql, memory.truncatedReads, memory.columnsSet);
  const outcome = await runSql(deps.db, deps.ticketStore, {
    sql,
    connection: deps.connectionKey,
    requestedBy: deps.requestedBy,
    settings: deps.settings,
    logger: deps.logger,
    ...(contextLint.length > 0 ? { contextLint } : {}),
  });
  const sqlFile = await deps.store.nextSqlFile(jobId, todoId ?? sql.split(/\s+/).slice(0, 4).join(' '));
  await deps.store.writeFile(jobId, sqlFile, `${sql}\n`);
  const number = sqlFile.slice('sql/'.length, sqlFile.indexOf('-'));
  switch (outcome.status) {
    case 'executed':
      await deps.audit(jobId, {
        type: 'sql',
        node: 'tacticalTools',
        sql,
        outcome: 'executed',
        detail: `${outcome.result.rowCount} rows read (${sqlFile})`,
      });
      if (outcome.result.truncated)
        memory.onTruncated({
          rows: outcome.result.rowCount,
          tables: outcome.classification.statements.flatMap((s) => s.tables),
        });
      return { kind: 'result', ok: true, content: clip(rowsForModel(outcome.result)) };
    case 'refused':
      await deps.audit(jobId, {
        type: 'sql',
        node: 'tacticalTools',
        sql,
        outcome: 'refused',
        detail: outcome.classification.reasons.join('; '),
      });
      return {
        kind: 'result',
        ok: false,
        content: `Error (SQL_REFUSED): refused by policy, never runs through the agent: ${outcome.classification.reasons.join('; ')}.`,
      };
    case 'held': {
      const impactFile = `impact/${number}.json`;
      await deps.store.writeFile(
        jobId,
        impactFile,
        `${JSON.stringify({ ticket: outcome.ticket.id, sql, sqlFile, todo: todoId, ...outcome.impact }, null, 2)}\n`,
      );
      await deps.audit(jobId, {
        type: 'sql',
        node: 'tacticalTools',
        sql,
        outcome: 'held',
        detail: `ticket ${outcome.ticket.id}, risk ${outcome.impact.risk}, ${sqlFile}`,
      });
      deps.emit({ type: 'files', jobId });
      return {
        kind: 'held',
        write: { ticketId: outcome.ticket.id, sql, sqlFile, impact: outcome.impact, todoId },
        // Lint findings (issue 10) go with it, so a rejection for its locks can be answered with the safer form.
        content: `Held for a person's approval (ticket ${outcome.ticket.id}, risk ${outcome.impact.risk}).${lintForModel(outcome.impact.lint)}`,
      };
    }
    case 'written':
      // Not reachable: the agent's writes are never auto-approved (no autoApprove flag is passed).
      return { kind: 'result', ok: false, content: 'Error (INTERNAL): unexpected auto-approved write.' };
  }
}

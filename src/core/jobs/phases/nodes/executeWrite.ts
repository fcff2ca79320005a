/**
 * Runs an approved write of the job (ticket re-checked at this moment, effects compared with the
 * preview, undo script kept in undo/NNN.sql) or records its rejection, and answers the model's call.
 * A failed execution commits nothing and is reported to the model, which decides what comes next — except
 * a write that could not get its locks (LOCK_UNAVAILABLE: others hold them; nothing ran, the ticket stays
 * approved and unspent): the job waits at this write, saying who is in the way, and Continue runs it again.
 */
import { join } from 'node:path';
import { toAgentError } from '../../../platform/errors';
import type { ChatMessage } from '../../../llm/provider';
import type { UndoSink } from '../../../sql/approvedTicket';
import { executeApproved } from '../../../sql/executeApproved';
import { undoFileText, voidedUndoText } from '../../../sql/writeArtifacts';
import type { JobGraphDeps } from '../jobGraphDeps';
import type { ExecutedWrite } from '../jobState';
import type { ColumnSet } from '../jobWriteFindings';
import { columnsSetBy } from '../jobWriteFindings';
import type { JobNode } from './nodeType';

export function makeExecuteWriteNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const pending = state.pendingWrite;
    const decision = state.writeDecision;
    if (!pending) return { writeDecision: undefined };
    let content: string;
    let lastExecution: ExecutedWrite | undefined;
    let columnsSet: ColumnSet[] = [];
    // An execution of this ticket already happened (this job's process died after it, before its checkpoint):
    // what the database says happened is what the model is told; nothing runs a second time.
    const earlier = await earlierExecution(deps, pending.ticketId);
    if (earlier) {
      content = earlier.content;
      // What it SET is set all the same (or may be: EXECUTING): a later write filtering on it is flagged (issue 25).
      if (earlier.mayHaveRun) columnsSet = columnsSetBy(pending.sql, pending.sqlFile);
    } else if (decision?.approve) {
      try {
        const number = pending.sqlFile.slice('sql/'.length, pending.sqlFile.indexOf('-'));
        const undoFile = `undo/${number}.sql`;
        const result = await executeApproved(deps.db, deps.ticketStore, pending.ticketId, {
          ...deps.settings,
          connection: deps.connectionKey,
          by: decision.by,
          undo: jobUndoSink(deps, state.jobId, undoFile, pending.sqlFile),
          logger: deps.logger,
        });
        const perTable = result.tables
          .map((t) => `${t.schema}.${t.name}: +${t.inserted} ~${t.updated} -${t.deleted} (${t.via})`)
          .join('; ');
        content = `Executed after approval by ${decision.by}: ${result.rows} row(s) changed (${perTable}). Undo script: ${undoFile}.`;
        lastExecution = { ticketId: pending.ticketId, rows: result.rows, tables: result.tables, undoFile };
        columnsSet = columnsSetBy(result.ticket.sql, pending.sqlFile);
        await deps.audit(state.jobId, {
          type: 'sql',
          node: 'executeWrite',
          sql: result.ticket.sql,
          outcome: 'executed',
          detail: `${result.rows} rows changed, undo ${undoFile}`,
        });
      } catch (error) {
        const e = toAgentError(error);
        if (e.code === 'LOCK_UNAVAILABLE') {
          await deps.audit(state.jobId, {
            type: 'error',
            node: 'executeWrite',
            code: e.code,
            message: `${e.message} The job waits: the ticket is still approved; Continue runs it again.`,
          });
          deps.emit({ type: 'files', jobId: state.jobId });
          return { pendingWrite: { ...pending, lockWait: e.message }, writeDecision: undefined };
        }
        content = `Error (${e.code}): the approved write failed and nothing was committed: ${e.message}${e.advice ? ` ${e.advice}` : ''}`;
        await deps.audit(state.jobId, { type: 'error', node: 'executeWrite', code: e.code, message: e.message });
      }
    } else {
      content = `Rejected by ${decision?.by ?? 'the reviewer'}${decision?.comment ? `: ${decision.comment}` : ''}. The write did not run.`;
    }
    deps.emit({ type: 'files', jobId: state.jobId });
    const answers: ChatMessage[] = [
      { role: 'tool', name: pending.toolName, toolCallId: pending.toolCallId, content },
      ...pending.laterCalls.map((c): ChatMessage => ({
        role: 'tool',
        name: c.name,
        toolCallId: c.id,
        content: 'Not run: it came after a write that needed a decision. Call it again if it is still needed.',
      })),
    ];
    return {
      messages: answers,
      pendingWrite: undefined,
      writeDecision: undefined,
      ...(lastExecution ? { lastExecution } : {}),
      ...(columnsSet.length > 0 ? { columnsSet } : {}),
    };
  };
}

/** The job's undo/NNN.sql, written before COMMIT (its absolute path goes on the ticket), voided if nothing committed. */
function jobUndoSink(deps: JobGraphDeps, jobId: string, undoFile: string, sqlFile: string): UndoSink {
  return {
    save: async (undo, header) => {
      await deps.store.writeFile(jobId, undoFile, undoFileText(`-- Undo of ${sqlFile}\n${header}`, undo));
      return join(deps.store.jobDir(jobId), undoFile);
    },
    markVoid: async (_file, reason) => {
      await deps.store.writeFile(jobId, undoFile, voidedUndoText(await deps.store.readFile(jobId, undoFile), reason));
    },
  };
}

/** The truth about a ticket an earlier run of this step already executed (resolved from pg_xact_status on read). */
async function earlierExecution(
  deps: JobGraphDeps,
  ticketId: string,
): Promise<{ content: string; mayHaveRun: boolean } | undefined> {
  const ticket = await deps.ticketStore.get(ticketId);
  const execution = ticket?.execution;
  if (!ticket || !execution) return undefined;
  const undo = execution.undoFile ? ` Undo script: ${execution.undoFile}.` : '';
  const told = earlierText(ticket.status, ticketId, execution.xid, undo);
  return told === undefined ? undefined : { content: told, mayHaveRun: ticket.status !== 'FAILED' };
}

function earlierText(status: string, ticketId: string, xid: string, undo: string): string | undefined {
  switch (status) {
    case 'EXECUTED':
      return `Executed earlier (ticket ${ticketId}, transaction ${xid}): the run stopped before recording it, and the database says it committed. Do not run it again.${undo}`;
    case 'FAILED':
      return `Not executed: an earlier attempt (ticket ${ticketId}, transaction ${xid}) did not commit, so nothing changed. The ticket is spent; propose the write again if it is still needed.`;
    case 'EXECUTING':
      return `Outcome not known yet: ticket ${ticketId} (transaction ${xid}) is still executing, or its database cannot be asked now. Do not run it again; check \`pg-agent approvals show ${ticketId}\`.`;
    default:
      return undefined;
  }
}

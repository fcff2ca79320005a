/**
 * Runs an approved write of the job (ticket re-checked at this moment, effects compared with the
 * preview, undo script kept in undo/NNN.sql) or records its rejection, and answers the model's call.
 * A failed execution commits nothing and is reported to the model, which decides what comes next.
 */
import { toAgentError } from '../../../errors';
import type { ChatMessage } from '../../../llm/provider';
import { classifySql } from '../../../sql/classify';
import { executeApproved } from '../../../sql/executeApproved';
import { loadParser } from '../../../sql/parse';
import type { JobGraphDeps } from '../jobGraphDeps';
import type { ExecutedWrite } from '../jobState';
import type { JobNode } from './nodeType';

export function makeExecuteWriteNode(deps: JobGraphDeps): JobNode {
  return async (state) => {
    const pending = state.pendingWrite;
    const decision = state.writeDecision;
    if (!pending) return { writeDecision: undefined };
    let content: string;
    let lastExecution: ExecutedWrite | undefined;
    if (decision?.approve) {
      try {
        await loadParser();
        const result = await executeApproved(
          deps.db,
          deps.ticketStore,
          { ticketId: pending.ticketId, sql: pending.sql, connection: deps.connectionKey, classification: classifySql(pending.sql) },
          { ...deps.settings, by: decision.by, logger: deps.logger },
        );
        const number = pending.sqlFile.slice('sql/'.length, pending.sqlFile.indexOf('-'));
        const undoFile = `undo/${number}.sql`;
        const notes = result.undo.warnings.map((w) => `-- ! ${w}\n`).join('');
        await deps.store.writeFile(state.jobId, undoFile, `-- Undo of ${pending.sqlFile} (ticket ${pending.ticketId})\n${notes}${result.undo.sql}`);
        const perTable = result.tables.map((t) => `${t.schema}.${t.name}: +${t.inserted} ~${t.updated} -${t.deleted} (${t.via})`).join('; ');
        content = `Executed after approval by ${decision.by}: ${result.rows} row(s) changed (${perTable}). Undo script: ${undoFile}.`;
        lastExecution = { ticketId: pending.ticketId, rows: result.rows, tables: result.tables, undoFile };
        await deps.audit(state.jobId, { type: 'sql', node: 'executeWrite', sql: pending.sql, outcome: 'executed', detail: `${result.rows} rows changed, undo ${undoFile}` });
      } catch (error) {
        const e = toAgentError(error);
        content = `Error (${e.code}): the approved write failed and nothing was committed: ${e.message}${e.advice ? ` ${e.advice}` : ''}`;
        await deps.audit(state.jobId, { type: 'error', node: 'executeWrite', code: e.code, message: e.message });
      }
    } else {
      content = `Rejected by ${decision?.by ?? 'the reviewer'}${decision?.comment ? `: ${decision.comment}` : ''}. The write did not run.`;
    }
    deps.emit({ type: 'files', jobId: state.jobId });
    const answers: ChatMessage[] = [
      { role: 'tool', name: pending.toolName, toolCallId: pending.toolCallId, content },
      ...pending.laterCalls.map((c): ChatMessage => ({ role: 'tool', name: c.name, toolCallId: c.id, content: 'Not run: it came after a write that needed a decision. Call it again if it is still needed.' })),
    ];
    return { messages: answers, pendingWrite: undefined, writeDecision: undefined, ...(lastExecution ? { lastExecution } : {}) };
  };
}

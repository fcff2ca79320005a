/** Runs the approved ticket's own SQL (re-checked at this moment, compared with the preview); the undo script goes to .pgagent/undo. */
import { executeApproved } from '../../sql/executeApproved';
import { workspaceUndoSink } from '../../sql/writeArtifacts';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';

export function makeExecuteWriteNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    try {
      if (!state.ticketId || !state.decision?.approve) {
        throw new Error('executeWrite reached without an approved ticket');
      }
      const result = await executeApproved(deps.db, deps.ticketStore, state.ticketId, {
        ...deps.settings,
        connection: deps.connectionKey,
        by: state.decision.by,
        undo: workspaceUndoSink(deps.undoDir, state.ticketId),
        logger: deps.logger,
      });
      await deps.audit.record(threadId, {
        type: 'sql',
        node: 'executeWrite',
        sql: result.ticket.sql,
        outcome: 'executed',
        detail: `${result.rows} rows changed`,
      });
      return {
        execution: {
          rows: result.rows,
          tables: result.tables,
          undoSql: result.undo.sql,
          undoWarnings: result.undo.warnings,
          undoFile: result.undoFile,
          elapsedMs: result.elapsedMs,
        },
      };
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'executeWrite', error) };
    }
  };
}

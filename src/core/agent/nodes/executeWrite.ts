/** Runs the approved ticket (re-checked at this moment, compared with the preview) and keeps the undo script. */
import { executeApproved } from '../../sql/executeApproved';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';

export function makeExecuteWriteNode(deps: AskDeps): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    const sql = state.sql ?? '';
    try {
      if (!state.classification || !state.ticketId || !state.decision?.approve) {
        throw new Error('executeWrite reached without an approved ticket');
      }
      const result = await executeApproved(
        deps.db,
        deps.ticketStore,
        { ticketId: state.ticketId, sql, connection: deps.connectionKey, classification: state.classification },
        { ...deps.settings, by: state.decision.by, logger: deps.logger },
      );
      await deps.audit.record(threadId, { type: 'sql', node: 'executeWrite', sql, outcome: 'executed', detail: `${result.rows} rows changed` });
      return { execution: { rows: result.rows, tables: result.tables, undoSql: result.undo.sql, undoWarnings: result.undo.warnings, elapsedMs: result.elapsedMs } };
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'executeWrite', error) };
    }
  };
}

/** A read the parser allowed runs through the safety path: READ ONLY transaction, timeouts, row cap. */
import { AgentError } from '../../platform/errors';
import { runSql } from '../../sql/runSql';
import type { CarriedChecks } from '../carriedChecks';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';

export function makeRunReadNode(deps: AskDeps, checks: CarriedChecks): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    const sql = state.sql ?? '';
    try {
      const checked = checks.take(sql);
      // The validation's check of this SQL, when it was made in this process (else runSql checks it now).
      const outcome = await runSql(deps.db, deps.ticketStore, {
        sql,
        connection: deps.connectionKey,
        requestedBy: deps.requestedBy,
        settings: deps.settings,
        ...(checked ? { checked } : {}),
      });
      await deps.audit.record(threadId, {
        type: 'sql',
        node: 'runRead',
        sql,
        outcome: outcome.status,
        ...(outcome.status === 'executed' ? { detail: `${outcome.result.rowCount} rows` } : {}),
      });
      if (outcome.status !== 'executed') {
        throw new AgentError('INTERNAL', `The read was not executed (${outcome.status}).`);
      }
      return { result: outcome.result };
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'runRead', error) };
    }
  };
}

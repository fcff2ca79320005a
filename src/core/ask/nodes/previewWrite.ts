/**
 * A write gets its impact preview and an approval ticket. Idempotent: when the state already holds a
 * ticket for this exact SQL, no second ticket is created (a re-run must not multiply tickets).
 */
import { AgentError } from '../../platform/errors';
import { runSql } from '../../sql/runSql';
import type { CarriedChecks } from '../carriedChecks';
import type { AskDeps } from '../deps';
import { threadIdOf } from '../deps';
import { failureInfo } from '../nodeErrors';
import type { AskNode } from '../nodeTypes';

export function makePreviewWriteNode(deps: AskDeps, checks: CarriedChecks): AskNode {
  return async (state, config) => {
    const threadId = threadIdOf(config);
    const sql = state.sql ?? '';
    try {
      if (state.ticketId) {
        const existing = await deps.ticketStore.get(state.ticketId);
        if (existing?.sql === sql) return { impact: existing.impact };
      }
      const checked = checks.take(sql);
      // The validation's check of this SQL, when it was made in this process (else runSql checks it now).
      const outcome = await runSql(deps.db, deps.ticketStore, {
        sql,
        connection: deps.connectionKey,
        requestedBy: deps.requestedBy,
        settings: deps.settings,
        ...(checked ? { checked } : {}),
      });
      if (outcome.status !== 'held') {
        throw new AgentError('INTERNAL', `The write was expected to be held for approval but was ${outcome.status}.`);
      }
      await deps.audit.record(threadId, {
        type: 'sql',
        node: 'previewWrite',
        sql,
        outcome: 'held',
        detail: `ticket ${outcome.ticket.id}, risk ${outcome.impact.risk}`,
      });
      return { impact: outcome.impact, ticketId: outcome.ticket.id };
    } catch (error) {
      return { error: await failureInfo(deps, threadId, 'previewWrite', error) };
    }
  };
}

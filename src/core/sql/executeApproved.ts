/**
 * Executes an approved write (SPEC §5.6): claims the ticket (single use; SQL hash and connection
 * re-checked at this moment), runs the exact approved SQL in one transaction, compares the actual
 * per-table effects with the approved preview and rolls back when they exceed it beyond a tolerance
 * (the data changed since review), then commits and returns the undo script built from before-images.
 */
import type { Ticket } from '../approvals/ticket';
import { sqlHash } from '../approvals/ticket';
import type { TicketStore } from '../approvals/ticketStore';
import type { Db } from '../db/db';
import { AgentError, toAgentError } from '../errors';
import type { Logger } from '../logger';
import type { Classification } from './classification';
import type { TableEffect } from './impactReport';
import { setLocalTimeouts } from './runRead';
import type { ChangedTable } from './tableEffects';
import { attributeEffects, diffStats, readXactStats, resolveTables } from './tableEffects';
import type { UndoScript } from './undoCapture';
import { installUndoCapture, UNDO_CAPTURE_TRIGGER } from './undoCapture';
import { executeClaimedOutsideTransaction, runsOutsideTransaction } from './ddl/executeOutsideTransaction';

export interface ExecuteOptions {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /** Extra share of the approved count allowed per table and kind of change (0.1 = 10 %). */
  tolerance: number;
  /** Who runs it (recorded in the ticket's history). */
  by: string;
  logger: Logger;
}

export interface ExecutionResult {
  ticket: Ticket;
  tables: TableEffect[];
  rows: number;
  undo: UndoScript;
  elapsedMs: number;
}

export async function executeApproved(
  db: Db,
  store: TicketStore,
  request: { ticketId: string; sql: string; connection: string; classification: Classification },
  options: ExecuteOptions,
): Promise<ExecutionResult> {
  const started = performance.now();
  const ticket = await store.claim(request.ticketId, { sqlHash: sqlHash(request.sql), connection: request.connection });
  // Issue 10 (SPEC §5.4a): a statement PostgreSQL runs only outside a transaction runs alone, without BEGIN.
  if (runsOutsideTransaction(request.classification.statements)) {
    return executeClaimedOutsideTransaction(db, store, ticket, request.classification, options, started);
  }
  const log = { ticket: ticket.id, db: db.label };
  options.logger.info('executing approved write', log);
  let outcome: { tables: TableEffect[]; undo: UndoScript };
  try {
    outcome = await db.withSession(async (session) => {
      await session.query('BEGIN');
      let committed = false;
      try {
        await setLocalTimeouts(session, options.statementTimeoutMs, options.lockTimeoutMs);
        const capture = await installUndoCapture(session, ticket.impact.tables.map((t) => `${t.schema}.${t.name}`));
        const before = await readXactStats(session);
        const directRelids: number[] = [];
        for (const statement of request.classification.statements) {
          directRelids.push(...(await resolveTables(session, statement.writesTo)));
          await session.query(statement.sql);
        }
        const changed = diffStats(before, await readXactStats(session));
        const exceeded = compareWithApproved(changed, ticket, options.tolerance);
        if (exceeded.length > 0) {
          throw new AgentError(
            'IMPACT_EXCEEDED',
            `Rolled back: the write changed more than was approved (${exceeded.join('; ')}).`,
            'The data changed since the review. Look at the impact again and approve the new numbers if they are right.',
          );
        }
        const effects = await attributeEffects(session, changed, directRelids, [UNDO_CAPTURE_TRIGGER]);
        const undo = await capture.buildScript();
        await capture.remove();
        await session.query('COMMIT');
        committed = true;
        return { tables: effects.tables, undo };
      } finally {
        if (!committed) await session.query('ROLLBACK').catch(() => undefined);
      }
    });
  } catch (error) {
    const e = toAgentError(error);
    await store.finish(ticket.id, { ok: false, by: options.by, comment: e.message }).catch((finishError: unknown) =>
      options.logger.error('could not mark the ticket failed', { ...log, error: String(finishError) }),
    );
    options.logger.warn('approved write rolled back', { ...log, code: e.code, error: e.message });
    throw e;
  }
  const rows = outcome.tables.reduce((sum, t) => sum + t.inserted + t.updated + t.deleted, 0);
  const finished = await store.finish(ticket.id, { ok: true, by: options.by, comment: `${rows} rows changed` });
  options.logger.info('approved write committed', { ...log, rows });
  return { ticket: finished, tables: outcome.tables, rows, undo: outcome.undo, elapsedMs: Math.round(performance.now() - started) };
}

/** "orders: 12 deleted, approved 10" for every table and kind of change beyond the tolerance. */
export function compareWithApproved(changed: readonly ChangedTable[], ticket: Ticket, tolerance: number): string[] {
  const approved = new Map<string, { inserted: number; updated: number; deleted: number }>();
  for (const t of ticket.impact.tables) {
    const key = `${t.schema}.${t.name}`;
    const a = approved.get(key) ?? { inserted: 0, updated: 0, deleted: 0 };
    approved.set(key, { inserted: a.inserted + t.inserted, updated: a.updated + t.updated, deleted: a.deleted + t.deleted });
  }
  const problems: string[] = [];
  for (const c of changed) {
    const key = `${c.schema}.${c.name}`;
    const a = approved.get(key) ?? { inserted: 0, updated: 0, deleted: 0 };
    for (const kind of ['inserted', 'updated', 'deleted'] as const) {
      const allowed = a[kind] + Math.ceil(a[kind] * tolerance);
      if (c[kind] > allowed) problems.push(`${key}: ${c[kind]} ${kind}, approved ${a[kind]}`);
    }
  }
  return problems;
}

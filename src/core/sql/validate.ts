/**
 * Validation before anything runs (parse + EXPLAIN without ANALYZE): unknown tables or columns, type
 * errors and bad casts surface with PostgreSQL's message and position while nothing is executed. Used
 * by the agent to repair SQL a model wrote, and by anyone who wants to check SQL without running it.
 */
import type { Db } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import type { Classification } from './classification';
import { setLocalTimeouts } from './runRead';
import { withReach } from './reach/checkSql';
import { blockingEffects } from './reach/reachVerdicts';
import { plannedRowsOf } from './plannedRows';

/** Statement kinds EXPLAIN accepts; others (DDL, utility statements) are checked by the parser only. */
const EXPLAINABLE = new Set([
  'SelectStmt',
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'CreateTableAsStmt',
  'DeclareCursorStmt',
  'ExecuteStmt',
]);
/** Data changes: their plan is read as JSON, for the rows the planner expects them to write. */
const DML = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

export type Validation =
  | {
      ok: true;
      /**
       * The rows the planner expects the first statement to write, when it is a data change that was
       * EXPLAINed: the impact preview takes it instead of EXPLAINing the same statement again (nothing ran
       * before the first statement, so the plan is the same).
       */
      firstPlannedRows?: number | null;
    }
  | {
      ok: false;
      /** Index of the statement that failed. */
      statement: number;
      error: { sqlState: string; message: string; position?: number; hint?: string };
    };

export async function validateSql(db: Db, given: Classification, timeoutMs: number): Promise<Validation> {
  // Planning runs the database's code too: a statement whose reach acts beyond READ ONLY is not explained
  // (it is held, not previewed, further on); the parser's check is all it gets here.
  const classification = await withReach(db, given);
  return db.withSession(async (session) => {
    // READ ONLY: EXPLAIN without ANALYZE executes nothing, and this makes sure of it.
    await session.query('BEGIN READ ONLY');
    try {
      await setLocalTimeouts(session, timeoutMs, timeoutMs);
      let firstPlannedRows: number | null | undefined;
      for (const [i, statement] of classification.statements.entries()) {
        if (!EXPLAINABLE.has(statement.kind) || blockingEffects(statement).length > 0) continue;
        const explain = DML.has(statement.kind) ? 'EXPLAIN (FORMAT JSON) ' : 'EXPLAIN ';
        try {
          const result = await session.query<{ 'QUERY PLAN': unknown }>(`${explain}${statement.sql}`);
          if (i === 0 && DML.has(statement.kind)) firstPlannedRows = plannedRowsOf(result.rows[0]?.['QUERY PLAN']);
        } catch (error) {
          if (!(error instanceof DbQueryError)) throw error;
          // PostgreSQL's position counts from the start of "EXPLAIN …"; point into the input instead.
          const position =
            error.position === undefined ? undefined : statement.offset + error.position - 1 - explain.length;
          return {
            ok: false,
            statement: i,
            error: {
              sqlState: error.sqlState,
              message: error.message,
              ...(position !== undefined && position >= 0 ? { position } : {}),
              ...(error.hint ? { hint: error.hint } : {}),
            },
          };
        }
      }
      return firstPlannedRows === undefined ? { ok: true } : { ok: true, firstPlannedRows };
    } finally {
      await session.query('ROLLBACK');
    }
  });
}

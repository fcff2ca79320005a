/**
 * Impact analysis (SPEC §5.4): the planner's estimate from EXPLAIN and the exact effects of a preview
 * that runs the statements in BEGIN … ROLLBACK under a statement and lock timeout. A preview that fails
 * (constraint, FK violation, timeout) is reported as "would fail" with PostgreSQL's error.
 */
import type { Db, DbSession } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import { AgentError } from '../errors';
import type { Classification, StatementClassification } from './classification';
import type { ImpactReport } from './impactReport';
import { RISK_ORDER } from './impactReport';
import { setLocalTimeouts } from './runRead';
import type { RiskPolicy } from './risk';
import { assessRisk, requiresApproval } from './risk';
import type { ChangedTable } from './tableEffects';
import { attributeEffects, diffStats, mergeCounts, quoteQualified, readXactStats, resolveTables } from './tableEffects';

export interface ImpactOptions {
  previewTimeoutMs: number;
  lockTimeoutMs: number;
  policy: RiskPolicy;
}

/** A planner estimate this many times off the exact count earns a warning. */
const ESTIMATE_WARNING_RATIO = 10;

export async function analyzeImpact(db: Db, classification: Classification, options: ImpactOptions): Promise<ImpactReport> {
  const refused = classification.statements.find((s) => s.decision === 'refuse');
  if (refused) {
    throw new AgentError('SQL_REFUSED', `Refused: ${refused.reasons.join('; ')}.`, 'This statement never runs through Postgres Agent; run it yourself outside the agent if you must.');
  }
  const started = performance.now();
  const unsafe = classification.statements.map(whyNotPreviewable).filter((why): why is string => why !== undefined);
  const preview: PreviewOutcome =
    unsafe.length > 0
      ? { estimatedRows: null, exactRows: null, effects: null, wouldFail: null, warnings: unsafe.map((why) => `Not previewed: ${why}.`) }
      : await db.withSession((session) => previewInTransaction(session, classification.statements, options));
  const previewMs = Math.round(performance.now() - started);

  const touched = preview.effects?.tables.map((t) => `${t.schema}.${t.name}`) ?? classification.statements.flatMap((s) => s.writesTo);
  const rows = preview.exactRows ?? preview.estimatedRows ?? 0;
  const assessed = assessRisk({ classification, rows, tables: touched }, options.policy);
  // What cannot be previewed cannot be measured: never rate it below HIGH.
  const { risk, reasons } =
    unsafe.length > 0 && RISK_ORDER.indexOf(assessed.risk) < RISK_ORDER.indexOf('HIGH')
      ? { risk: 'HIGH' as const, reasons: [...assessed.reasons, 'its effect could not be measured beforehand, so it is at least HIGH'] }
      : assessed;
  const warnings = [...preview.warnings, ...reasons.map((r) => `Risk: ${r}.`)];
  if (preview.exactRows !== null && preview.estimatedRows !== null) {
    const [low, high] = [Math.min(preview.exactRows, preview.estimatedRows), Math.max(preview.exactRows, preview.estimatedRows)];
    if (high >= 10 && high > Math.max(low, 1) * ESTIMATE_WARNING_RATIO) {
      warnings.push(`The planner estimated ${preview.estimatedRows} rows, the preview touched ${preview.exactRows}: trust the exact count.`);
    }
  }
  return {
    statements: classification.statements.map((s) => s.sql),
    estimatedRows: preview.estimatedRows,
    exactRows: preview.exactRows,
    tables: preview.effects?.tables ?? [],
    risk,
    requiresApproval: requiresApproval(classification, risk, options.policy),
    wouldFail: preview.wouldFail,
    previewMs,
    warnings,
    foreignKeyActions: preview.effects?.foreignKeyActions ?? [],
    triggers: preview.effects?.triggers ?? [],
  };
}

/** Statement kinds whose code or data flow the preview cannot contain (procedural code, server files, prepared text). */
const NEVER_PREVIEWED: Record<string, string> = {
  DoStmt: 'a DO block runs code that may act outside the transaction',
  CallStmt: 'a procedure may commit or act outside the transaction',
  ExecuteStmt: 'EXECUTE runs a prepared statement the preview cannot see',
  CopyStmt: 'COPY reads or writes outside the database',
};

/**
 * Why running a statement inside BEGIN … ROLLBACK would not be harmless, if it would not: only data
 * changes and DDL are previewed, and only when they call no function whose effect survives a rollback.
 */
export function whyNotPreviewable(statement: StatementClassification): string | undefined {
  const never = NEVER_PREVIEWED[statement.kind];
  if (never) return never;
  if (statement.sideEffects.length > 0) return `it calls ${statement.sideEffects.join(', ')}, whose effects a rollback does not undo`;
  if (statement.class !== 'write' && statement.class !== 'ddl') return `${statement.kind} is ${statement.class === 'session' ? 'a session change' : `${statement.class} work`}, not a data change`;
  return undefined;
}

interface PreviewOutcome {
  estimatedRows: number | null;
  exactRows: number | null;
  effects: Awaited<ReturnType<typeof attributeEffects>> | null;
  wouldFail: ImpactReport['wouldFail'];
  warnings: string[];
}

async function previewInTransaction(
  session: DbSession,
  statements: readonly StatementClassification[],
  options: ImpactOptions,
): Promise<PreviewOutcome> {
  const warnings: string[] = [];
  let estimatedRows: number | null = 0;
  await session.query('BEGIN');
  try {
    await setLocalTimeouts(session, options.previewTimeoutMs, options.lockTimeoutMs);
    const before = await readXactStats(session);
    const truncated: ChangedTable[] = [];
    const directRelids: number[] = [];
    try {
      for (const statement of statements) {
        const estimate = await planEstimate(session, statement.sql);
        estimatedRows = estimate === null || estimatedRows === null ? null : estimatedRows + estimate;
        directRelids.push(...(await resolveTables(session, statement.writesTo)));
        if (statement.kind === 'TruncateStmt') truncated.push(...(await countRows(session, statement.writesTo)));
        await session.query(statement.sql);
      }
    } catch (error) {
      if (!(error instanceof DbQueryError)) throw error;
      if (error.sqlState === '57014') {
        warnings.push(`The preview was stopped by its ${options.previewTimeoutMs} ms time limit; the write itself may take longer.`);
      }
      return { estimatedRows, exactRows: null, effects: null, wouldFail: { code: error.sqlState, message: error.message }, warnings };
    }
    const changed = mergeCounts(diffStats(before, await readXactStats(session)), truncated);
    const effects = await attributeEffects(session, changed, directRelids);
    const exactRows = effects.tables.reduce((sum, t) => sum + t.inserted + t.updated + t.deleted, 0);
    if (effects.tables.some((t) => t.inserted > 0)) {
      warnings.push('Sequence values used by the preview are not given back by its rollback (ids may have gaps).');
    }
    if (truncated.length > 0 && statements.some((s) => s.kind === 'TruncateStmt' && /\bcascade\b/i.test(s.sql))) {
      warnings.push('TRUNCATE … CASCADE also empties every table that references these; only the named tables are counted.');
    }
    return { estimatedRows, exactRows, effects, wouldFail: null, warnings };
  } finally {
    await session.query('ROLLBACK');
  }
}

/**
 * Rows the planner expects the statement to write: the sum of the row estimates of the children of
 * its ModifyTable nodes. Null when the statement cannot be explained (DDL, utility statements).
 */
async function planEstimate(session: DbSession, sql: string): Promise<number | null> {
  await session.query('SAVEPOINT pgagent_explain');
  try {
    const result = await session.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`);
    await session.query('RELEASE SAVEPOINT pgagent_explain');
    const raw = result.rows[0]?.['QUERY PLAN'];
    const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan?: PlanNode }[] | undefined;
    return plan?.[0]?.Plan ? modifyTableRows(plan[0].Plan) : null;
  } catch (error) {
    await session.query('ROLLBACK TO SAVEPOINT pgagent_explain');
    if (error instanceof DbQueryError) return null;
    throw error;
  }
}

interface PlanNode {
  'Node Type'?: string;
  'Plan Rows'?: number;
  Plans?: PlanNode[];
}

function modifyTableRows(node: PlanNode): number | null {
  let found: number | null = null;
  const visit = (n: PlanNode) => {
    if (n['Node Type'] === 'ModifyTable') {
      const child = n.Plans?.[0]?.['Plan Rows'];
      if (typeof child === 'number') found = (found ?? 0) + child;
    }
    for (const c of n.Plans ?? []) visit(c);
  };
  visit(node);
  return found;
}

async function countRows(session: DbSession, tables: readonly string[]): Promise<ChangedTable[]> {
  const counted: ChangedTable[] = [];
  for (const table of tables) {
    const result = await session.query<{ relid: number; schema: string; name: string; n: number }>(
      `SELECT c.oid::int8::float8 AS relid, n.nspname AS schema, c.relname AS name,
              (SELECT count(*) FROM ${quoteQualified(table)})::float8 AS n
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`,
      [quoteQualified(table)],
    );
    const row = result.rows[0];
    if (row) counted.push({ relid: row.relid, schema: row.schema, name: row.name, inserted: 0, updated: 0, deleted: row.n });
  }
  return counted;
}

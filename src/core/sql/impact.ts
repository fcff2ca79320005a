/**
 * Impact analysis (SPEC §5.4): the planner's estimate from EXPLAIN and the exact effects of a preview
 * that runs the statements in BEGIN … ROLLBACK under a statement and lock timeout. A preview that fails
 * (constraint, FK violation, timeout) is reported as "would fail" with PostgreSQL's error.
 */
import type { Db, DbSession } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import { AgentError } from '../platform/errors';
import type { Classification, StatementClassification } from './classification';
import type { ImpactReport, LintFindingView } from '../../shared/impactReport';
import type { Risk } from '../../shared/impactReport';
import { setLocalTimeouts } from './runRead';
import type { RiskPolicy } from './risk';
import { requiresApproval, riskOfWrite } from './risk';
import type { ChangedTable } from './tableEffects';
import { attributeEffects, diffStats, mergeCounts, readXactStats, resolveTables } from './tableEffects';
import type { DdlAnalysis } from './ddl/ddlAnalysis';
import { analyseDdl } from './ddl/ddlAnalysis';
import { blockersOf, PREVIEW_BLOCKING_BUDGET_MS, PREVIEW_LOCK_WAIT_MS } from './ddl/ddlPreview';
import { relfilenodes } from './ddl/tableSize';
import { predictFailure } from './ddl/wouldFail';
import type { CheckedSql } from './reach/checkSql';
import { withReach } from './reach/checkSql';
import type { ReachEntry } from '../../shared/reachTypes';
import { reachRiskFloor } from './reach/reachVerdicts';
import { withDroppedRows } from './ddl/droppedRows';
import { sweepingWriteFindings } from './sweepingWrites';
import { planRecovery } from './recovery/recoveryPlan';
import { outsideQuarantine } from './recovery/quarantineStore';
import { dropsEmptiedQuarantine, planRestores } from './recovery/restorePlan';
import { RowLockBudget } from './rowLockBudget';
import { countRows, planEstimate, tablesUsingSequences } from './previewReads';
import { whyNotPreviewable } from './previewable';

export { whyNotPreviewable } from './previewable';
import type { RecoverySettings } from './safetySettings';
import { DEFAULT_RECOVERY } from './safetySettings';

export interface ImpactOptions {
  previewTimeoutMs: number;
  lockTimeoutMs: number;
  policy: RiskPolicy;
  /**
   * Called inside the preview's transaction once its statements ran, before the ROLLBACK: lets a test or
   * benchmark observe what the open preview blocks (SPEC §5.4a is asserted by observation, not timing).
   */
  whilePreviewOpen?: () => Promise<void>;
  /** The way back from destructive DDL (issue 25); default DEFAULT_RECOVERY. */
  recovery?: RecoverySettings;
  /** Findings the caller made from context the SQL does not show (a job's earlier steps, issue 25); they lift the risk too. */
  contextLint?: LintFindingView[];
}

/** A planner estimate this many times off the exact count earns a warning. */
const ESTIMATE_WARNING_RATIO = 10;

/**
 * `carried`: what the check of this SQL already found (its parse, the first statement's planned rows), so
 * that the lock model does not parse it again and the first statement is not EXPLAINed twice.
 */
export async function analyzeImpact(
  db: Db,
  given: Classification,
  options: ImpactOptions,
  carried?: Pick<CheckedSql, 'parsed' | 'firstPlannedRows'>,
): Promise<ImpactReport> {
  // What the database's own code would do decides whether a preview may run at all (SPEC §5 1a).
  const classification = await withReach(db, given);
  const refused = classification.statements.find((s) => s.decision === 'refuse');
  if (refused) {
    throw new AgentError(
      'SQL_REFUSED',
      `Refused: ${refused.reasons.join('; ')}.`,
      'This statement never runs through Postgres Agent; run it yourself outside the agent if you must.',
    );
  }
  const started = performance.now();
  const ddl = await db.withSession((session) =>
    analyseDdl(
      session,
      classification.statements,
      { thresholds: options.policy.thresholds, lockTimeoutMs: options.lockTimeoutMs },
      carried?.parsed,
    ),
  );
  const unsafe = classification.statements
    .map((s, i) => whyNotPreviewable(s, ddl.plans[i]?.known === true))
    .filter((why): why is string => why !== undefined);
  let preview: PreviewOutcome;
  if (unsafe.length > 0) {
    preview = {
      estimatedRows: null,
      exactRows: null,
      effects: null,
      wouldFail: null,
      warnings: unsafe.map((why) => `Not previewed: ${why}.`),
      rewrites: null,
    };
  } else if (ddl.noPreview !== null) {
    preview = {
      estimatedRows: null,
      exactRows: null,
      effects: null,
      wouldFail: null,
      warnings: [`Not previewed: ${ddl.noPreview}; analysed from the catalog instead.`],
      rewrites: null,
    };
  } else {
    preview = await db.withSession((session) =>
      previewInTransaction(session, classification.statements, options, ddl, carried?.firstPlannedRows),
    );
  }
  const previewed = preview.rewrites !== null;
  let wouldFail = preview.wouldFail;
  const predictionWarnings: string[] = [];
  if (!previewed && wouldFail === null) {
    // Nothing ran: what the catalog and read-only queries prove instead (READ ONLY, ACCESS SHARE at most).
    wouldFail = ddl.wouldFail;
    if (wouldFail === null && unsafe.length === 0) {
      const prediction = await db.withSession((session) =>
        predictFailure(session, ddl.changes, options.previewTimeoutMs),
      );
      wouldFail = prediction.wouldFail;
      predictionWarnings.push(...prediction.warnings);
    }
    if (wouldFail !== null)
      predictionWarnings.push(
        'Would fail: predicted from the catalog and a read-only query, without running the statement.',
      );
  }
  const recovery = classification.statements.some((s) => s.destructive)
    ? await db.withSession((session) =>
        planRecovery(session, classification.statements, options.recovery ?? DEFAULT_RECOVERY),
      )
    : [];
  const restores = await planRestores(
    db,
    classification.statements.map((s) => s.sql),
  );
  const previewMs = Math.round(performance.now() - started);

  const touched =
    preview.effects?.tables.map((t) => `${t.schema}.${t.name}`) ?? classification.statements.flatMap((s) => s.writesTo);
  const rows = preview.exactRows ?? preview.estimatedRows ?? 0;
  const rewrites = preview.rewrites ?? ddl.rewrites;
  const locks = await withDroppedRows(
    db,
    classification.statements,
    ddl.locks.map((l) => (rewrites.includes(l.table) || l.work !== 'rewrite' ? l : { ...l, work: 'scan' as const })),
  );
  // What cannot be previewed cannot be measured: never rate it below HIGH (DDL the lock model knows is
  // measured by lock × size × rewrite instead). Code we only cannot see into (and that is all) is at least
  // MEDIUM; code that does what ROLLBACK cannot undo will do it again at execution: at least HIGH.
  const floor = unpreviewedFloor(classification.statements, (s, i) =>
    whyNotPreviewable(s, ddl.plans[i]?.known === true),
  );
  // Issue 25: a filtered write that sweeps (almost) the whole table, or far beyond its estimate: one level up.
  const sweeping = [...(preview.lint ?? []), ...(options.contextLint ?? [])];
  const rated = classification.statements.map((s, i) =>
    s.destructive && dropsEmptiedQuarantine(ddl.plans[i]?.changes ?? []) ? { ...s, destructive: false } : s,
  );
  const { risk, reasons } = riskOfWrite(
    {
      classification: { ...classification, statements: rated },
      rows,
      tables: touched,
      ddl: { locks, rewrites },
      ...(floor !== undefined ? { floor } : {}),
      lifting: sweeping,
    },
    options.policy,
  );
  const warnings = [...ddl.warnings, ...preview.warnings, ...predictionWarnings, ...reasons.map((r) => `Risk: ${r}.`)];
  const reachSequences = [...new Set(classification.statements.flatMap((s) => s.reachSequences ?? []))];
  if (!previewed && reachSequences.length > 0) {
    warnings.push(
      `It advances the sequence${reachSequences.length === 1 ? '' : 's'} ${reachSequences.join(', ')} (through the database's own code): values it uses are never given back, also when it fails or is rolled back.`,
    );
  }
  if (!ddl.transactional)
    warnings.unshift('Cannot be rolled back: it runs outside a transaction, alone, once approved.');
  if (preview.exactRows !== null && preview.estimatedRows !== null) {
    const [low, high] = [
      Math.min(preview.exactRows, preview.estimatedRows),
      Math.max(preview.exactRows, preview.estimatedRows),
    ];
    if (high >= 10 && high > Math.max(low, 1) * ESTIMATE_WARNING_RATIO) {
      warnings.push(
        `The planner estimated ${preview.estimatedRows} rows, the preview touched ${preview.exactRows}: trust the exact count.`,
      );
    }
  }
  return {
    statements: classification.statements.map((s) => s.sql),
    estimatedRows: preview.estimatedRows,
    exactRows: preview.exactRows,
    tables: preview.effects?.tables ?? [],
    risk,
    requiresApproval: requiresApproval(classification, risk, options.policy),
    wouldFail,
    previewMs,
    warnings,
    foreignKeyActions: preview.effects?.foreignKeyActions ?? [],
    triggers: preview.effects?.triggers ?? [],
    previewed,
    locks: locks.map((l) => ({
      table: l.table,
      mode: l.mode,
      blocks: l.blocks,
      work: l.work,
      rows: l.rows,
      bytes: l.bytes,
      ...(l.rowsExact !== undefined ? { rowsExact: l.rowsExact } : {}),
      waitsBehind: l.waitsBehind,
      why: l.why,
    })),
    rewrites,
    dependents: ddl.dependents,
    lint: [...withWayBack(ddl.lint, recovery), ...sweeping],
    transactional: ddl.transactional,
    reach: reachEntries(classification.statements),
    ...(ddl.lockHolders.length > 0 ? { lockHolders: ddl.lockHolders } : {}),
    ...(recovery.length > 0 ? { recovery } : {}),
    ...(restores.length > 0 ? { restores } : {}),
  };
}

/** The lint against destroying data, told that this approval keeps a way back (issue 25). */
function withWayBack(
  lint: ImpactReport['lint'],
  recovery: readonly NonNullable<ImpactReport['recovery']>[number][],
): ImpactReport['lint'] {
  if (!recovery.some((r) => r.way !== 'none')) return lint;
  const destroying = new Set(['ban-drop-table', 'ban-drop-column', 'ban-truncate-cascade']);
  return lint.map((l) =>
    destroying.has(l.rule)
      ? {
          ...l,
          advice: `${l.advice} Here the recovery window keeps a way back (see "Way back"): \`pg-agent undo <ticket>\` once it ran.`,
        }
      : l,
  );
}

/** The least risk of statements that were not previewed: MEDIUM when all that stopped them is unknown code. */
function unpreviewedFloor(
  statements: readonly StatementClassification[],
  why: (s: StatementClassification, i: number) => string | undefined,
): Risk | undefined {
  const stopped = statements.filter((s, i) => why(s, i) !== undefined);
  if (stopped.length === 0) return undefined;
  // Stopped by something besides the reach (a DO block, a side-effect call, a session change): HIGH as before.
  if (statements.some((s, i) => why({ ...s, reachEffects: [] }, i) !== undefined)) return 'HIGH';
  return reachRiskFloor(stopped);
}

interface PreviewOutcome {
  estimatedRows: number | null;
  exactRows: number | null;
  effects: Awaited<ReturnType<typeof attributeEffects>> | null;
  wouldFail: ImpactReport['wouldFail'];
  warnings: string[];
  /** Tables whose relfilenode the preview changed (a rewrite, seen); null when the preview did not complete. */
  rewrites: string[] | null;
  /** Findings only a completed preview can make (writes that sweep their table: sweepingWrites.ts). */
  lint?: LintFindingView[];
}

const DML_KINDS = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

async function previewInTransaction(
  session: DbSession,
  statements: readonly StatementClassification[],
  options: ImpactOptions,
  ddl: DdlAnalysis,
  firstPlannedRows: number | null | undefined,
): Promise<PreviewOutcome> {
  const warnings: string[] = [];
  let estimatedRows: number | null = 0;
  // The sequences the reach advances (serial and identity columns, a trigger's nextval, `SET id = DEFAULT`),
  // named; without a reach, the inserted tables that have one (SPEC §5 1a: the same disclosure either way).
  const reachSequences = [...new Set(statements.flatMap((s) => s.reachSequences ?? []))];
  const sequenced = reachSequences.length > 0 ? reachSequences : await tablesUsingSequences(session, statements);
  const sequenceWarning = (failed: boolean) =>
    failed
      ? `The failed preview may still have used sequence values of ${sequenced.join(', ')}: they are not given back (ids may have gaps).`
      : 'Sequence values used by the preview are not given back by its rollback (ids may have gaps).';
  const oids = [...ddl.facts.values()].map((f) => f.oid);
  // SPEC §5.4a: while a lock that blocks reads or writes may be held, the whole transaction stays within
  // the bound: a short wait for the lock, then statements stopped when the budget is spent.
  const bounded = ddl.blockingPreview;
  const lockTimeoutMs = bounded ? Math.min(options.lockTimeoutMs, PREVIEW_LOCK_WAIT_MS) : options.lockTimeoutMs;
  await session.query('BEGIN');
  try {
    await setLocalTimeouts(session, bounded ? PREVIEW_BLOCKING_BUDGET_MS : options.previewTimeoutMs, lockTimeoutMs);
    const before = await readXactStats(session);
    const nodesBefore = await relfilenodes(session, oids);
    const truncated: ChangedTable[] = [];
    const directRelids: number[] = [];
    let firstLockAt: number | undefined;
    const rowLocks = new RowLockBudget();
    try {
      for (const [i, statement] of statements.entries()) {
        const dml = DML_KINDS.has(statement.kind);
        // Before anything ran, the first statement's plan is the one its validation already EXPLAINed.
        const estimate = !dml
          ? null
          : i === 0 && firstPlannedRows !== undefined
            ? firstPlannedRows
            : await planEstimate(session, statement.sql);
        estimatedRows = estimate === null || estimatedRows === null ? null : estimatedRows + estimate;
        directRelids.push(...(await resolveTables(session, statement.writesTo)));
        if (statement.kind === 'TruncateStmt') truncated.push(...(await countRows(session, statement.writesTo)));
        if (bounded) {
          firstLockAt ??= performance.now();
          const left = Math.max(1, Math.round(PREVIEW_BLOCKING_BUDGET_MS - (performance.now() - firstLockAt)));
          await session.query(`SET LOCAL statement_timeout = ${left}`);
        } else {
          const left = rowLocks.timeoutFor(statement, options.previewTimeoutMs);
          if (left !== undefined) await session.query(`SET LOCAL statement_timeout = ${left}`);
        }
        await session.query(statement.sql);
      }
      if (options.whilePreviewOpen) await options.whilePreviewOpen();
    } catch (error) {
      if (!(error instanceof DbQueryError)) throw error;
      if (sequenced.length > 0) warnings.push(sequenceWarning(true));
      if (bounded && (error.sqlState === '57014' || error.sqlState === '55P03')) {
        // Our own bound stopped it: not a failure of the statement, a finding about its locks.
        await session.query('ROLLBACK');
        await session.query('BEGIN');
        const waiting =
          error.sqlState === '55P03' ? await Promise.all(oids.map((oid) => blockersOf(session, oid))) : [];
        const behind = waiting.reduce((a, b) => Math.max(a, b), 0);
        warnings.push(
          error.sqlState === '55P03'
            ? `Not previewed: its lock was not free within ${lockTimeoutMs} ms (waits behind ${behind} session${behind === 1 ? '' : 's'}); it stopped waiting so that no one queued behind it.`
            : `Not previewed to the end: it was stopped after ${PREVIEW_BLOCKING_BUDGET_MS} ms so as not to block other sessions; under its lock it takes longer than that.`,
        );
        return { estimatedRows: null, exactRows: null, effects: null, wouldFail: null, warnings, rewrites: null };
      }
      if (error.sqlState === '57014' && rowLocks.tightest) {
        // Our row-lock bound stopped it (rowLockBudget.ts): not previewed, with the planner's estimate.
        warnings.push(rowLocks.note(estimatedRows));
        return { estimatedRows, exactRows: null, effects: null, wouldFail: null, warnings, rewrites: null };
      }
      if (error.sqlState === '57014') {
        warnings.push(
          `The preview was stopped by its ${options.previewTimeoutMs} ms time limit; the write itself may take longer.`,
        );
      }
      return {
        estimatedRows,
        exactRows: null,
        effects: null,
        wouldFail: { code: error.sqlState, message: error.message },
        warnings,
        rewrites: [],
      };
    }
    const nodesAfter = await relfilenodes(session, oids);
    const emptied = new Set(statements.filter((s) => s.kind === 'TruncateStmt').flatMap((s) => s.writesTo));
    const rewrites = [...ddl.facts.values()]
      .filter(
        (f) =>
          nodesBefore.get(f.oid) !== nodesAfter.get(f.oid) &&
          ![...emptied].some((t) => f.table === t || f.table.endsWith(`.${t}`)),
      )
      .map((f) => f.table);
    // The quarantine's own rows (an undo forgetting its entry) are not the data's: not counted, as at execution.
    const changed = outsideQuarantine(mergeCounts(diffStats(before, await readXactStats(session)), truncated));
    const effects = await attributeEffects(session, changed, directRelids);
    const exactRows = effects.tables.reduce((sum, t) => sum + t.inserted + t.updated + t.deleted, 0);
    const lint = await sweepingWriteFindings(
      session,
      statements,
      effects.tables,
      estimatedRows,
      options.policy.sweepingWrites,
    );
    if (effects.tables.some((t) => t.inserted > 0) || sequenced.length > 0) warnings.push(sequenceWarning(false));
    if (truncated.length > 0 && statements.some((s) => s.kind === 'TruncateStmt' && /\bcascade\b/i.test(s.sql))) {
      warnings.push(
        'TRUNCATE … CASCADE also empties every table that references these; only the named tables are counted.',
      );
    }
    return { estimatedRows, exactRows, effects, wouldFail: null, warnings, rewrites, lint };
  } finally {
    await session.query('ROLLBACK');
  }
}

/** Every statement's reach in one list, each function and way in once. */
function reachEntries(statements: readonly StatementClassification[]): ReachEntry[] {
  const seen = new Map<string, ReachEntry>();
  for (const entry of statements.flatMap((s) => s.reach ?? [])) seen.set(`${entry.function}\u0000${entry.via}`, entry);
  return [...seen.values()];
}

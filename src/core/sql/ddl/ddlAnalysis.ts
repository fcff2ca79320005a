/**
 * Everything the impact report says about DDL and maintenance before anything runs (SPEC §5.4a): the lock
 * each table gets and what it blocks, the table's size, whether its storage is rewritten, what depends on
 * it, lint with safer statements, and whether a preview may run at all. Catalog and pg_locks reads only.
 */
import type { DbSession } from '../../db/db';
import type { StatementClassification } from '../classification';
import type { Dependent } from './dependents';
import { findDependents } from './dependents';
import { conflictingSessions, describeWaiters } from './ddlPreview';
import type { LockHolder, LockTarget } from './lockHolders';
import { sessionsInTheWay } from './lockHolders';
import type { LintFinding } from './lint';
import { lintStatement } from './lint';
import type { DdlChange, DdlPlan, LockWork } from './ddlPlan';
import { WORK_ORDER } from './ddlPlan';
import { planParsed, planStatement } from './lockModel';
import type { ParsedInput } from '../parse';
import { parseSql } from '../parse';
import { rangeVarName, rec } from '../parseTree';
import type { Blocks, LockMode } from './lockModes';
import { blocksOf, strongest } from './lockModes';
import { refineWork } from './rewrite';
import type { SizeClass, SizeThresholds, TableFacts } from './tableSize';
import { describeTableSize, sizeClass, tableFacts } from './tableSize';

/** One table's lock, as the report shows it (SPEC §6 `locks`: table, mode, blocks; the rest is additive). */
export interface LockReport {
  table: string;
  mode: LockMode;
  blocks: Blocks;
  /** How long it is held: for a catalog change (instant), a scan of the table, or a rewrite of it. */
  work: LockWork;
  why: string;
  rows: number | null;
  bytes: number | null;
  size: SizeClass | null;
  /** Other sessions holding or awaiting a conflicting lock right now. */
  waitsBehind: number;
}

export interface DdlAnalysis {
  locks: LockReport[];
  /** Tables whose storage would be rewritten (predicted; confirmed by the relfilenode when a preview ran). */
  rewrites: string[];
  dependents: Dependent[];
  lint: LintFinding[];
  /** A failure the catalog makes certain (dependents), before any query of the data. */
  wouldFail: null | { code: string; message: string };
  /** False when a statement runs outside a transaction and cannot be rolled back. */
  transactional: boolean;
  /** Why the statements are analysed, not executed; null when a preview may run. */
  noPreview: string | null;
  /** A preview would hold a lock that blocks reads or writes: it runs under the 250 ms budget. */
  blockingPreview: boolean;
  changes: DdlChange[];
  plans: DdlPlan[];
  warnings: string[];
  /** The facts of every table locked, by "schema.name". */
  facts: Map<string, TableFacts>;
  /** Sessions holding or awaiting a lock that conflicts with one the statements need (pid, user, state, query). */
  lockHolders: LockHolder[];
}

export interface DdlAnalysisOptions {
  thresholds: SizeThresholds;
  lockTimeoutMs: number;
}

/** `parsed`: the parse the statements were classified from, when the caller has it (not parsed again). */
export async function analyseDdl(
  session: DbSession,
  statements: readonly StatementClassification[],
  options: DdlAnalysisOptions,
  parsed?: ParsedInput,
): Promise<DdlAnalysis> {
  const plans = statements.map((s, i) => {
    const statement = parsed?.statements[i];
    return parsed && statement?.sql === s.sql ? planParsed({ statement, source: parsed }) : planStatement(s.sql);
  });
  const facts = new Map<string, TableFacts>();
  const byTable = new Map<string, LockReport>();
  const warnings: string[] = [];
  const reasons: string[] = [];
  const lint: LintFinding[] = [];
  const changes = plans.flatMap((p) => p.changes);
  const refined = await refineWork(session, changes);
  let blockingPreview = false;
  const targets: LockTarget[] = [];

  // A table this input creates is empty when its later statements change it (a diff's foreign keys): not in use.
  const created = statements
    .filter((s) => s.kind === 'CreateStmt')
    .flatMap((s) => rangeVarName(rec(rec(parseSql(s.sql).statements[0]?.tree, 'CreateStmt'), 'relation')) ?? []);

  for (const [i, plan] of plans.entries()) {
    const statement = statements[i];
    if (!statement) continue;
    const resolved: (TableFacts | undefined)[] = [];
    for (const l of plan.locks) {
      const f = await tableFacts(session, l.relation, l.target);
      resolved.push(f);
      if (!f) continue;
      facts.set(f.table, f);
      // The catalog's answer replaces the lock model's guess for changes it can decide (rewrite or not).
      // The lock model gives these changes their least work; the catalog can only make it longer.
      const decided = refined.filter(
        (r) =>
          l.target === 'table' &&
          r.table === l.relation &&
          plan.changes.some((c) => 'table' in c && c.table === r.table),
      );
      const work = decided.reduce<LockWork>(
        (a, d) => (WORK_ORDER.indexOf(d.work) > WORK_ORDER.indexOf(a) ? d.work : a),
        l.work,
      );
      const why = work === l.work ? l.why : (decided.find((d) => d.work === work)?.why ?? l.why);
      const seen = byTable.get(f.table);
      const mode = seen ? strongest(seen.mode, l.mode) : l.mode;
      const longest = seen && WORK_ORDER.indexOf(seen.work) > WORK_ORDER.indexOf(work) ? seen.work : work;
      const size = sizeClass(f, options.thresholds);
      byTable.set(f.table, {
        table: f.table,
        mode,
        blocks: blocksOf(mode),
        work: longest,
        why: seen && seen.work === longest ? seen.why : why,
        rows: f.rows,
        bytes: f.bytes,
        size,
        waitsBehind: seen?.waitsBehind ?? 0,
      });
    }
    for (const [j, l] of plan.locks.entries()) {
      const f = resolved[j];
      const report = f ? byTable.get(f.table) : undefined;
      if (!f || !report) continue;
      targets.push({ oid: f.oid, table: f.table, mode: l.mode });
      const waiters = await conflictingSessions(session, f.oid, l.mode);
      if (waiters.length > 0) {
        report.waitsBehind = Math.max(report.waitsBehind, waiters.length);
        const finding = `${l.mode} on ${f.table} ${describeWaiters(waiters)}${blocksOf(l.mode) === 'nothing' ? '' : `; while it waits, later ${blocksOf(l.mode)} of ${f.table} queue behind it`}`;
        warnings.push(`Lock: ${finding}.`);
        // A queued lock that blocks no reads or writes harms no one: the preview still runs (with a short lock_timeout).
        if (blocksOf(l.mode) !== 'nothing') reasons.push(`its lock is not free: ${finding}`);
      }
    }
    if (!plan.transactional) reasons.push('it runs outside a transaction, so no preview can roll it back');
    for (const report of byTable.values()) {
      if (report.blocks === 'nothing') continue;
      if (report.work !== 'instant' && report.size !== 'small') {
        const what = report.work === 'rewrite' ? 'rewrite' : 'scan';
        reasons.push(
          `it would hold ${report.mode} on ${report.table} (${describeTableSize({ rows: report.rows, bytes: report.bytes ?? 0 })}) for a ${what} of the table, blocking its ${report.blocks}`,
        );
      } else {
        blockingPreview = true;
      }
    }
    const inUse = (table: string): boolean => {
      if (created.some((c) => c === table || c.endsWith(`.${table}`) || table.endsWith(`.${c}`))) return false;
      const f = [...facts.values()].find((x) => x.table === table || x.table.endsWith(`.${table}`));
      return f === undefined || f.rows === null || f.rows > 0 || f.bytes > 16_384;
    };
    lint.push(
      ...lintStatement({
        sql: statement.sql,
        kind: plan.kind,
        changes: plan.changes,
        locks: [...byTable.values()].map((r) => ({
          relation: r.table,
          target: 'table' as const,
          mode: r.mode,
          work: r.work,
          why: r.why,
        })),
        inUse,
        notSmall: (table) => [...byTable.values()].some((r) => r.table === table && r.size !== 'small'),
        rewrites: refined.some(
          (r) => r.work === 'rewrite' && plan.changes.some((c) => c.kind === 'addColumn' && c.table === r.table),
        ),
        notNullProven: (table, column) =>
          refined.some((r) => r.table === table && r.work === 'instant' && r.why.includes(`(${column} IS NOT NULL)`)),
        lockTimeoutMs: options.lockTimeoutMs,
      }),
    );
  }
  const deps = await findDependents(session, changes);
  const locks = [...byTable.values()];
  return {
    locks,
    rewrites: locks.filter((l) => l.work === 'rewrite').map((l) => l.table),
    dependents: deps.dependents,
    lint,
    wouldFail: deps.wouldFail,
    transactional: plans.every((p) => p.transactional),
    noPreview: reasons.length > 0 ? [...new Set(reasons)].join('; ') : null,
    blockingPreview,
    changes,
    plans,
    warnings,
    facts,
    lockHolders: await sessionsInTheWay(session, targets),
  };
}

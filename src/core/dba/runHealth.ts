/**
 * `pg-agent health`: every check of checks/*, each in its own READ ONLY read with a statement timeout; a check
 * that cannot run (privilege, timeout, a view this server lacks) says so and the others still run.
 */
import type { Db } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import { toAgentError } from '../platform/errors';
import type { CatalogLimits } from './catalogRead';
import { DEFAULT_CATALOG_LIMITS, withCatalogReader } from './catalogRead';
import { duplicateIndexes, invalidIndexes, unusedIndexes } from './checks/indexChecks';
import { indexBloat, tableBloat } from './checks/bloatChecks';
import { staleMaintenance, xidWraparound } from './checks/vacuumChecks';
import { sequencesNearMax } from './checks/sequenceChecks';
import { connectionSaturation, idleInTransaction, longRunningQueries } from './checks/sessionChecks';
import { cacheHitRatios, missingFkIndexes, replicationSlots } from './checks/otherChecks';
import type { CheckContext, CheckResult, HealthCheck, HealthReport, HealthThresholds } from './healthTypes';
import { DEFAULT_THRESHOLDS, MAX_FINDINGS } from './healthTypes';

export const HEALTH_CHECKS: readonly HealthCheck[] = [
  invalidIndexes,
  unusedIndexes,
  duplicateIndexes,
  tableBloat,
  indexBloat,
  staleMaintenance,
  xidWraparound,
  sequencesNearMax,
  longRunningQueries,
  idleInTransaction,
  connectionSaturation,
  replicationSlots,
  missingFkIndexes,
  cacheHitRatios,
];

export interface HealthOptions {
  thresholds?: Partial<HealthThresholds>;
  /** Only these check ids (all when absent). */
  only?: readonly string[];
  limits?: CatalogLimits;
  /** Findings listed per check, the worst first (MAX_FINDINGS); the others are counted as `more`. */
  maxFindings?: number;
  onProgress?: (message: string) => void;
}

export async function runHealth(db: Db, options: HealthOptions = {}): Promise<HealthReport> {
  const started = performance.now();
  const thresholds: HealthThresholds = { ...DEFAULT_THRESHOLDS, ...options.thresholds };
  const limits = options.limits ?? DEFAULT_CATALOG_LIMITS;
  const checks = options.only ? HEALTH_CHECKS.filter((c) => options.only?.includes(c.id)) : HEALTH_CHECKS;
  return withCatalogReader(db, limits, async (reader) => {
    const [server] = await reader.read<{ database: string; version: string; version_num: string; superuser: boolean }>(
      `SELECT current_database() AS database, current_setting('server_version') AS version, current_setting('server_version_num') AS version_num,
              coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false) AS superuser`,
    );
    const context: CheckContext = {
      read: (sql, params) => reader.read(sql, params),
      thresholds,
      serverVersion: Number(server?.version_num ?? 0),
      isSuperuser: server?.superuser ?? false,
      maxFindings: options.maxFindings ?? MAX_FINDINGS,
    };
    const results: CheckResult[] = [];
    for (const check of checks) {
      options.onProgress?.(`health: ${check.title}`);
      results.push(await runCheck(check, context, limits));
    }
    const findings = results.flatMap((r) => r.findings);
    return {
      database: server?.database ?? '',
      serverVersion: server?.version ?? '',
      checkedAt: new Date().toISOString(),
      checks: results,
      summary: {
        ok: results.filter((r) => r.status === 'ok').length,
        findings: results.filter((r) => r.status === 'findings').length,
        skipped: results.filter((r) => r.status === 'skipped').length,
        error: results.filter((r) => r.status === 'error').length,
        critical: findings.filter((f) => f.severity === 'critical').length,
        warning: findings.filter((f) => f.severity === 'warning').length,
        info: findings.filter((f) => f.severity === 'info').length,
        unlisted: results.reduce((n, r) => n + (r.more ?? 0), 0),
      },
      queries: reader.queries,
      elapsedMs: Math.round(performance.now() - started),
    };
  });
}

async function runCheck(check: HealthCheck, context: CheckContext, limits: CatalogLimits): Promise<CheckResult> {
  const started = performance.now();
  const thresholds = Object.fromEntries(check.thresholdKeys.map((k) => [k, context.thresholds[k]]));
  const base = { id: check.id, title: check.title, thresholds };
  try {
    const outcome = await check.run(context);
    const elapsedMs = Math.round(performance.now() - started);
    if ('skipped' in outcome) return { ...base, status: 'skipped', findings: [], note: outcome.skipped, elapsedMs };
    if ('findings' in outcome)
      return {
        ...base,
        status: outcome.findings.length > 0 ? 'findings' : 'ok',
        findings: outcome.findings,
        ...(outcome.note !== undefined ? { note: outcome.note } : {}),
        ...(outcome.more ? { more: outcome.more } : {}),
        elapsedMs,
      };
    return { ...base, status: outcome.length > 0 ? 'findings' : 'ok', findings: outcome, elapsedMs };
  } catch (error) {
    const elapsedMs = Math.round(performance.now() - started);
    const skipped = couldNotRun(error, limits);
    if (skipped) return { ...base, status: 'skipped', findings: [], note: skipped, elapsedMs };
    return { ...base, status: 'error', findings: [], note: toAgentError(error).message, elapsedMs };
  }
}

/** A failure that means "this check cannot run here", said the way a person fixes it. */
export function couldNotRun(error: unknown, limits: CatalogLimits): string | undefined {
  if (!(error instanceof DbQueryError)) return undefined;
  switch (error.sqlState) {
    case '42501':
      return `missing privilege: ${error.message} (a superuser, or a role granted pg_monitor, can run it)`;
    case '57014':
      return `timed out after ${limits.statementTimeoutMs} ms (statement_timeout); run it again with a longer --timeout-ms`;
    case '55P03':
      return `waited more than ${limits.lockTimeoutMs} ms for a lock; not waited for`;
    case '42P01':
    case '42883':
    case '42703':
      return `this server lacks what the check reads: ${error.message}`;
    default:
      return undefined;
  }
}

/** What `pg-agent health` reports (the `--json` shape, README "pg-agent health"): checks, findings, evidence, fixes. */

export type Severity = 'info' | 'warning' | 'critical';

/** ok: ran, nothing found · findings: ran, something found · skipped: could not run (privilege, extension, server kind) · error: failed. */
export type CheckStatus = 'ok' | 'findings' | 'skipped' | 'error';

export type EvidenceValue = string | number | boolean | null;

export interface Finding {
  severity: Severity;
  /** The object the finding is about: "public.orders", "index public.orders_x", "pid 1234", "database shop". */
  object: string;
  message: string;
  /** The numbers the finding stands on, as the catalog gave them. */
  evidence: Record<string, EvidenceValue>;
  /** A suggested fix as SQL (held for approval like any write when run); absent when the fix is not SQL. */
  fixSql?: string;
  /** What to consider before running the fix, or what to do when it is not SQL. */
  advice?: string;
}

export interface CheckResult {
  id: string;
  title: string;
  status: CheckStatus;
  /** The thresholds this check used, so a reader knows what "too many" meant. */
  thresholds: Record<string, number>;
  findings: Finding[];
  /** Why the check was skipped or failed, in words a person can act on. */
  note?: string;
  /** Offenders found beyond the ones listed (each check lists at most `maxFindings`, the worst first). */
  more?: number;
  elapsedMs: number;
}

export interface HealthReport {
  database: string;
  serverVersion: string;
  checkedAt: string;
  checks: CheckResult[];
  summary: {
    ok: number;
    findings: number;
    skipped: number;
    error: number;
    /** Findings among the listed ones, by severity: the offenders a check did not list (`more`) are not in them. */
    critical: number;
    warning: number;
    info: number;
    /** Offenders found and not listed, all checks together (their severity was not read): the counts above are "at least". */
    unlisted: number;
  };
  /** Catalog reads issued (one READ ONLY transaction each). */
  queries: number;
  elapsedMs: number;
}

/** The thresholds of every check (README lists them); each may be overridden by a caller. */
export interface HealthThresholds {
  unusedIndexMinBytes: number;
  bloatMinRatio: number;
  bloatMinBytes: number;
  vacuumStaleDays: number;
  vacuumMinRows: number;
  wraparoundWarnAge: number;
  wraparoundCriticalAge: number;
  sequenceWarnRatio: number;
  sequenceCriticalRatio: number;
  longQuerySeconds: number;
  idleInTransactionSeconds: number;
  connectionWarnRatio: number;
  slotWarnBytes: number;
  fkMinTableRows: number;
  cacheHitMinRatio: number;
  cacheHitMinReads: number;
}

export const DEFAULT_THRESHOLDS: HealthThresholds = {
  unusedIndexMinBytes: 0,
  bloatMinRatio: 0.3,
  bloatMinBytes: 64 * 1024,
  vacuumStaleDays: 7,
  vacuumMinRows: 1000,
  wraparoundWarnAge: 500_000_000,
  wraparoundCriticalAge: 1_200_000_000,
  sequenceWarnRatio: 0.75,
  sequenceCriticalRatio: 0.9,
  longQuerySeconds: 300,
  idleInTransactionSeconds: 60,
  connectionWarnRatio: 0.8,
  slotWarnBytes: 1024 * 1024 * 1024,
  fkMinTableRows: 0,
  cacheHitMinRatio: 0.95,
  cacheHitMinReads: 1000,
};

/** One check: its id and title, which thresholds it reads, and what it finds through our catalog reads. */
export interface HealthCheck {
  id: string;
  title: string;
  thresholdKeys: readonly (keyof HealthThresholds)[];
  /** Findings; or why it could not run; or findings with a note on what it could not see. */
  run(context: CheckContext): Promise<Finding[] | { skipped: string } | Listed>;
}

/** Findings with what else the check has to say: a note on what it could not see, how many more it did not list. */
export interface Listed {
  findings: Finding[];
  note?: string;
  more?: number;
}

/** How many findings a check lists by default (the worst first); the rest are counted, not read. */
export const MAX_FINDINGS = 50;

/**
 * The findings of rows read with `count(*) OVER () AS total` and `LIMIT maxFindings`: what the catalog had beyond
 * the rows read is said as `more`.
 */
export function listed(findings: Finding[], rows: readonly { total?: string | number }[]): Listed {
  const total = Number(rows[0]?.total ?? rows.length);
  return { findings, ...(total > rows.length ? { more: total - rows.length } : {}) };
}

export interface CheckContext {
  read: <Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<Row[]>;
  thresholds: HealthThresholds;
  /** server_version_num. */
  serverVersion: number;
  isSuperuser: boolean;
  /** At most this many offenders are read (SQL LIMIT, the worst first); how many more there are is counted. */
  maxFindings: number;
}

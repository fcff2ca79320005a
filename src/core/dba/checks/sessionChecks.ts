/** Session checks of `pg-agent health`: long-running queries, idle-in-transaction sessions, connection saturation. */
import { listed, type CheckContext, type Finding, type HealthCheck, type Listed } from '../healthTypes';

interface ActivityRow {
  total: string;
  pid: number;
  usename: string | null;
  application_name: string | null;
  client_addr: string | null;
  datname: string | null;
  state: string;
  seconds: string;
  xact_seconds: string | null;
  query: string | null;
  wait_event: string | null;
}

const ACTIVITY = `SELECT pid, usename, application_name, client_addr::text, datname, state, wait_event,
         floor(extract(epoch FROM now() - %SINCE%))::text AS seconds, floor(extract(epoch FROM now() - xact_start))::text AS xact_seconds,
         left(query, 500) AS query, count(*) OVER ()::text AS total
    FROM pg_stat_activity
   WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND %STATE% AND now() - %SINCE% >= make_interval(secs => $1)
   ORDER BY %SINCE% LIMIT $2`;

function evidenceOf(r: ActivityRow): Finding['evidence'] {
  return {
    pid: r.pid,
    user: r.usename,
    application: r.application_name,
    client: r.client_addr,
    database: r.datname,
    state: r.state,
    seconds: Number(r.seconds),
    transaction_seconds: r.xact_seconds === null ? null : Number(r.xact_seconds),
    wait_event: r.wait_event,
    query: r.query,
  };
}

/**
 * Without superuser or pg_read_all_stats, PostgreSQL hides the state and query of other roles' sessions: the
 * findings then cover this role's sessions only, and the note says how many others could not be seen.
 */
async function withHiddenNote(
  context: CheckContext,
  rows: readonly ActivityRow[],
  findings: Finding[],
): Promise<Listed> {
  const shown = listed(findings, rows);
  if (context.isSuperuser) return shown;
  const [row] = await context.read<{ hidden: string }>(
    `SELECT count(*)::text AS hidden FROM pg_stat_activity
      WHERE backend_type IS NULL AND datid IS NOT NULL AND NOT pg_has_role('pg_read_all_stats', 'member')`,
  );
  const hidden = Number(row?.hidden ?? 0);
  if (hidden === 0) return shown;
  return {
    ...shown,
    note: `${hidden} sessions of other roles are hidden from this role (it needs pg_read_all_stats or pg_monitor to see their state).`,
  };
}

export const longRunningQueries: HealthCheck = {
  id: 'long_running_queries',
  title: 'Long-running queries',
  thresholdKeys: ['longQuerySeconds'],
  async run(context: CheckContext) {
    const { read, thresholds } = context;
    const rows = await read<ActivityRow>(
      ACTIVITY.replaceAll('%SINCE%', 'query_start').replace('%STATE%', "state = 'active'"),
      [thresholds.longQuerySeconds, context.maxFindings],
    );
    return withHiddenNote(
      context,
      rows,
      rows.map((r): Finding => ({
        severity: Number(r.seconds) >= thresholds.longQuerySeconds * 4 ? 'critical' : 'warning',
        object: `pid ${r.pid}`,
        message: `Session ${r.pid} (${r.usename ?? '?'}${r.application_name ? `, ${r.application_name}` : ''}) has been running one query for ${r.seconds} s.`,
        evidence: evidenceOf(r),
        fixSql: `SELECT pg_cancel_backend(${r.pid})`,
        advice:
          'Cancelling stops the query and rolls back its transaction; pg_terminate_backend ends the whole session. Check with its owner first.',
      })),
    );
  },
};

export const idleInTransaction: HealthCheck = {
  id: 'idle_in_transaction',
  title: 'Sessions idle in transaction',
  thresholdKeys: ['idleInTransactionSeconds'],
  async run(context: CheckContext) {
    const { read, thresholds } = context;
    const rows = await read<ActivityRow>(
      ACTIVITY.replaceAll('%SINCE%', 'state_change').replace(
        '%STATE%',
        "state IN ('idle in transaction', 'idle in transaction (aborted)')",
      ),
      [thresholds.idleInTransactionSeconds, context.maxFindings],
    );
    return withHiddenNote(
      context,
      rows,
      rows.map((r): Finding => ({
        severity: Number(r.seconds) >= Math.max(thresholds.idleInTransactionSeconds * 10, 600) ? 'critical' : 'warning',
        object: `pid ${r.pid}`,
        message: `Session ${r.pid} (${r.usename ?? '?'}${r.application_name ? `, ${r.application_name}` : ''}) has been idle in a transaction for ${r.seconds} s: it holds its locks and keeps VACUUM from removing dead rows.`,
        evidence: evidenceOf(r),
        fixSql: `SELECT pg_terminate_backend(${r.pid})`,
        advice:
          'Ending the session rolls back its open transaction. For the future: SET idle_in_transaction_session_timeout for the role or database.',
      })),
    );
  },
};

interface SaturationRow {
  used: string;
  max: string;
  reserved: string;
  by_state: string;
}

export const connectionSaturation: HealthCheck = {
  id: 'connection_saturation',
  title: 'Connection saturation',
  thresholdKeys: ['connectionWarnRatio'],
  async run({ read, thresholds }: CheckContext): Promise<Finding[]> {
    const [row] = await read<SaturationRow>(`
      SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' OR (backend_type IS NULL AND datid IS NOT NULL))::text AS used,
             current_setting('max_connections') AS max, current_setting('superuser_reserved_connections') AS reserved,
             (SELECT coalesce(string_agg(state || ': ' || n, ', ' ORDER BY n DESC), '') FROM (
                SELECT coalesce(state, 'unknown') AS state, count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' GROUP BY 1) s) AS by_state`);
    if (!row) return [];
    const used = Number(row.used);
    const available = Number(row.max) - Number(row.reserved);
    const ratio = available > 0 ? used / available : 1;
    if (ratio < thresholds.connectionWarnRatio) return [];
    return [
      {
        severity: ratio >= 0.95 ? 'critical' : 'warning',
        object: 'server',
        message: `${used} of ${available} connections for ordinary roles are in use (${Math.round(ratio * 100)}%); new clients will be refused when none is left.`,
        evidence: {
          connections: used,
          max_connections: Number(row.max),
          superuser_reserved: Number(row.reserved),
          used_ratio: Math.round(ratio * 1000) / 1000,
          by_state: row.by_state,
        },
        advice:
          'Put a connection pooler (PgBouncer) in front, or lower the pool sizes of the applications; raising max_connections costs memory and needs a restart.',
      },
    ];
  },
};

/**
 * `pg-agent top`: the heaviest statements PostgreSQL itself recorded (pg_stat_statements) in this database, by
 * total or mean time, calls, rows or I/O, with their normalized text. When the extension is not there, the
 * steps to set it up, never an error. Our own transaction bookkeeping (BEGIN, ROLLBACK, SET …) is left out.
 */
import type { Db } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import type { CatalogLimits, CatalogReader } from './catalogRead';
import { DEFAULT_CATALOG_LIMITS, withCatalogReader } from './catalogRead';

export const TOP_ORDERS = ['total', 'mean', 'calls', 'rows', 'io'] as const;
export type TopOrder = (typeof TOP_ORDERS)[number];

export interface TopQuery {
  queryid: string;
  /** Normalized text: constants replaced by $1, $2, … (or "<insufficient privilege>" for another role's query). */
  query: string;
  user: string | null;
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
  sharedBlksHit: number;
  sharedBlksRead: number;
  /** Share of blocks found in shared buffers, null when none were touched. */
  hitRatio: number | null;
  tempBlksWritten: number;
  /** Time spent reading and writing blocks (needs track_io_timing; 0 otherwise). */
  ioMs: number;
  /** This statement's share of the total execution time of all recorded statements in this database. */
  timeShare: number;
}

export type TopReport =
  | { available: true; by: TopOrder; database: string; statsSince: string | null; queries: TopQuery[]; note?: string }
  | { available: false; by: TopOrder; database: string; reason: string; setup: string[] };

/**
 * Left out: transaction control and session settings, and catalog reads (a FROM or JOIN of a pg_* relation: what
 * pg-agent itself runs to read the schema and the code the database holds, as do psql's \d and monitoring): the
 * list is about the application's statements.
 */
const SKIP_OUR_BOOKKEEPING = String.raw`query !~* '^\s*(BEGIN|START TRANSACTION|ROLLBACK|COMMIT|END|SET|RESET|DISCARD|SHOW|DEALLOCATE)\y' AND query !~* '\y(from|join)\s+(pg_catalog\.)?pg_[a-z_]+\y'`;

const ORDER_SQL: Record<TopOrder, string> = {
  total: 'total_ms DESC',
  mean: 'mean_ms DESC',
  calls: 'calls DESC',
  rows: 'rows DESC',
  io: 'shared_blks_read + temp_blks_written DESC, io_ms DESC',
};

/** Whether pg_stat_statements can be read here, and if not, why and what to do. */
export async function statementsAvailability(
  reader: CatalogReader,
): Promise<{ ok: true; database: string } | { ok: false; database: string; reason: string; setup: string[] }> {
  // shared_preload_libraries is readable by superusers and pg_read_all_settings only: through pg_settings it is
  // simply absent for others (null: unknown), where current_setting() would fail.
  const [state] = await reader.read<{
    database: string;
    installed: string | null;
    schema: string | null;
    preloaded: boolean | null;
    available: boolean;
  }>(
    `SELECT current_database() AS database,
            (SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements') AS installed,
            (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements') AS schema,
            (SELECT 'pg_stat_statements' = ANY (string_to_array(replace(setting, ' ', ''), ',')) FROM pg_settings WHERE name = 'shared_preload_libraries') AS preloaded,
            EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_stat_statements') AS available`,
  );
  const database = state?.database ?? '';
  const create =
    'CREATE EXTENSION pg_stat_statements;  -- in this database, as a superuser or a role with CREATE on it (pg-agent sql holds it for approval)';
  const preload =
    "Add pg_stat_statements to shared_preload_libraries in postgresql.conf (ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'; keep what is there already), then restart PostgreSQL.";
  if (!state?.available) {
    return {
      ok: false,
      database,
      reason: 'pg_stat_statements is not available on this server (the contrib package is not installed).',
      setup: [
        'Install the contrib package (Debian/Ubuntu: apt-get install postgresql-contrib; it ships with PostgreSQL on most managed services).',
        preload,
        create,
      ],
    };
  }
  if (state.preloaded === false) {
    return {
      ok: false,
      database,
      reason: 'pg_stat_statements is not loaded: it must be in shared_preload_libraries.',
      setup: state.installed ? [preload] : [preload, create],
    };
  }
  if (!state.installed) {
    return state.preloaded
      ? {
          ok: false,
          database,
          reason: `pg_stat_statements is loaded but the extension is not created in database ${database}.`,
          setup: [create],
        }
      : {
          ok: false,
          database,
          reason: `the pg_stat_statements extension is not created in database ${database} (this role cannot see whether the server loads it).`,
          setup: [`If it is not in shared_preload_libraries: ${preload}`, create],
        };
  }
  return { ok: true, database };
}

export async function topQueries(
  db: Db,
  options: { by?: TopOrder; limit?: number; limits?: CatalogLimits } = {},
): Promise<TopReport> {
  const by = options.by ?? 'total';
  const limit = Math.max(1, Math.min(options.limit ?? 10, 500));
  return withCatalogReader(db, options.limits ?? DEFAULT_CATALOG_LIMITS, async (reader) => {
    const availability = await statementsAvailability(reader);
    if (!availability.ok)
      return {
        available: false,
        by,
        database: availability.database,
        reason: availability.reason,
        setup: availability.setup,
      };
    try {
      const queries = await readTop(reader, by, limit);
      const hidden = queries.filter((q) => q.query === '<insufficient privilege>').length;
      const [since] = await reader
        .read<{ since: string | null }>(`SELECT stats_reset::text AS since FROM pg_stat_statements_info`)
        .catch(() => [{ since: null }]);
      return {
        available: true,
        by,
        database: availability.database,
        statsSince: since?.since ?? null,
        queries,
        ...(hidden > 0
          ? {
              note: `${hidden} of these are other roles' statements, whose text PostgreSQL hides from this role (grant it pg_read_all_stats to see them).`,
            }
          : {}),
      };
    } catch (error) {
      if (error instanceof DbQueryError && error.sqlState === '55000') {
        const preload =
          "Add pg_stat_statements to shared_preload_libraries in postgresql.conf (ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'; keep what is there already), then restart PostgreSQL.";
        return {
          available: false,
          by,
          database: availability.database,
          reason: `pg_stat_statements is created but not loaded: ${error.message}`,
          setup: [preload],
        };
      }
      if (error instanceof DbQueryError && error.sqlState === '42501') {
        return {
          available: false,
          by,
          database: availability.database,
          reason: `This role may not read pg_stat_statements: ${error.message}`,
          setup: ['GRANT pg_read_all_stats TO <this role>;  -- as a superuser'],
        };
      }
      throw error;
    }
  });
}

interface TopRow {
  queryid: string;
  query: string;
  usename: string | null;
  calls: string;
  total_ms: number;
  mean_ms: number;
  rows: string;
  shared_blks_hit: string;
  shared_blks_read: string;
  temp_blks_written: string;
  io_ms: number;
  share: number;
}

async function readTop(reader: CatalogReader, by: TopOrder, limit: number): Promise<TopQuery[]> {
  const rows = await reader.read<TopRow>(
    `WITH s AS (
       SELECT queryid::text, query, userid, calls, total_exec_time AS total_ms, mean_exec_time AS mean_ms, rows,
              shared_blks_hit, shared_blks_read, temp_blks_written, blk_read_time + blk_write_time AS io_ms
         FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND ${SKIP_OUR_BOOKKEEPING})
     SELECT s.queryid, s.query, r.rolname AS usename, s.calls::text, s.total_ms::float8 AS total_ms, s.mean_ms::float8 AS mean_ms, s.rows::text,
            s.shared_blks_hit::text, s.shared_blks_read::text, s.temp_blks_written::text, s.io_ms::float8 AS io_ms,
            (s.total_ms / nullif(sum(s.total_ms) OVER (), 0))::float8 AS share
       FROM s LEFT JOIN pg_roles r ON r.oid = s.userid
      ORDER BY ${ORDER_SQL[by]} LIMIT $1`,
    [limit],
  );
  return rows.map((r) => {
    const hit = Number(r.shared_blks_hit);
    const read = Number(r.shared_blks_read);
    return {
      queryid: r.queryid,
      query: r.query,
      user: r.usename,
      calls: Number(r.calls),
      totalMs: round(r.total_ms),
      meanMs: round(r.mean_ms),
      rows: Number(r.rows),
      sharedBlksHit: hit,
      sharedBlksRead: read,
      hitRatio: hit + read > 0 ? Math.round((hit / (hit + read)) * 10000) / 10000 : null,
      tempBlksWritten: Number(r.temp_blks_written),
      ioMs: round(r.io_ms),
      timeShare: Math.round((r.share ?? 0) * 10000) / 10000,
    };
  });
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

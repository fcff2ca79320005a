/**
 * Bloat estimates of `pg-agent health`, from the statistics alone (no table is read): a table's pages against
 * what its live rows need (row width from pg_stats, header and item pointer, fillfactor), dead tuples, and a
 * B-tree index's pages against what its entries need. Estimates, said so: they need ANALYZE statistics.
 */
import { listed, type CheckContext, type Finding, type HealthCheck, type Listed } from '../healthTypes';

interface TableBloatRow {
  total: string;
  table: string;
  bytes: string;
  expected_bytes: string;
  live: string;
  dead: string;
  analyzed: boolean;
}

export const tableBloat: HealthCheck = {
  id: 'table_bloat',
  title: 'Table bloat (estimate)',
  thresholdKeys: ['bloatMinRatio', 'bloatMinBytes'],
  async run({ read, thresholds, maxFindings }: CheckContext): Promise<Listed> {
    // pg_stats summed once per table (not a lookup per table); the ratios computed here, in SQL, so that only the
    // worst offenders (by wasted bytes) are read.
    const rows = await read<TableBloatRow>(
      `WITH t AS (
         SELECT c.oid, format('%I.%I', n.nspname, c.relname) AS "table", c.relpages::bigint * current_setting('block_size')::bigint AS bytes,
                greatest(c.reltuples, 0) AS tuples, greatest(c.reltuples, 0)::bigint AS live, coalesce(s.n_dead_tup, 0) AS dead,
                coalesce((SELECT substring(o FROM 'fillfactor=([0-9]+)')::int FROM unnest(c.reloptions) o WHERE o LIKE 'fillfactor=%'), 100) AS fillfactor,
                w.width, (s.last_analyze IS NOT NULL OR s.last_autoanalyze IS NOT NULL) AS analyzed
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
           LEFT JOIN (SELECT schemaname, tablename, sum(avg_width) AS width FROM pg_stats GROUP BY 1, 2) w
                  ON w.schemaname = n.nspname AND w.tablename = c.relname
          WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'),
       e AS (
         SELECT "table", bytes, ceil(tuples * (28 + coalesce(width, 0)) * 100.0 / fillfactor
                  / (current_setting('block_size')::int - 24)) * current_setting('block_size')::int AS expected_bytes,
                live, dead, analyzed
           FROM t
          WHERE bytes >= $1 AND (width IS NOT NULL OR dead > 0)),
       o AS (
         SELECT *, greatest(bytes - expected_bytes, 0) AS wasted FROM e
          WHERE (bytes > 0 AND greatest(bytes - expected_bytes, 0)::float8 / bytes >= $2)
             OR (live + dead > 0 AND dead::float8 / (live + dead) >= $2))
       SELECT "table", bytes::text, expected_bytes::text, live::text, dead::text, analyzed, count(*) OVER ()::text AS total
         FROM o ORDER BY greatest(wasted, dead::numeric / greatest(live + dead, 1) * bytes) DESC, bytes DESC, 1 LIMIT $3`,
      [thresholds.bloatMinBytes, thresholds.bloatMinRatio, maxFindings],
    );
    const findings: Finding[] = [];
    for (const r of rows) {
      const bytes = Number(r.bytes);
      const expected = Number(r.expected_bytes);
      const live = Number(r.live);
      const dead = Number(r.dead);
      const wasted = Math.max(0, bytes - expected);
      const ratio = bytes > 0 ? wasted / bytes : 0;
      const deadRatio = live + dead > 0 ? dead / (live + dead) : 0;
      if (ratio < thresholds.bloatMinRatio && deadRatio < thresholds.bloatMinRatio) continue;
      const mostlyDead = deadRatio >= thresholds.bloatMinRatio;
      findings.push({
        severity: ratio >= 0.7 || deadRatio >= 0.7 ? 'warning' : 'info',
        object: r.table,
        message: mostlyDead
          ? `${r.table}: ${Math.round(deadRatio * 100)}% of its rows are dead tuples; VACUUM makes that space reusable.`
          : `${r.table}: about ${Math.round(ratio * 100)}% of its ${bytes} bytes is free space its live rows do not need (estimate).`,
        evidence: {
          table: r.table,
          bytes,
          expected_bytes: expected,
          wasted_bytes: wasted,
          bloat_ratio: round(ratio),
          live_tuples: live,
          dead_tuples: dead,
          dead_ratio: round(deadRatio),
          analyzed: r.analyzed,
        },
        fixSql: `VACUUM (ANALYZE) ${r.table}`,
        advice: mostlyDead
          ? 'VACUUM does not block reads or writes; it makes the space reusable but rarely returns it to the OS.'
          : 'VACUUM makes space reusable; giving it back takes a rewrite (pg_repack without a long lock, or VACUUM FULL, which blocks reads and writes for its whole run).',
      });
    }
    return listed(findings, rows);
  },
};

interface IndexBloatRow {
  total: string;
  index: string;
  table: string;
  bytes: string;
  expected_bytes: string;
}

export const indexBloat: HealthCheck = {
  id: 'index_bloat',
  title: 'B-tree index bloat (estimate)',
  thresholdKeys: ['bloatMinRatio', 'bloatMinBytes'],
  async run({ read, thresholds, maxFindings }: CheckContext): Promise<Listed> {
    // An entry is an 8-byte header, its key columns' widths (MAXALIGNed) and a 4-byte item pointer; leaf pages filled 90%.
    const rows = await read<IndexBloatRow>(
      `WITH i AS (
         SELECT format('%I.%I', n.nspname, ic.relname) AS index, format('%I.%I', n.nspname, tc.relname) AS "table",
                ic.relpages::bigint * current_setting('block_size')::bigint AS bytes, greatest(ic.reltuples, 0) AS tuples,
                (SELECT sum(st.avg_width) FROM unnest(string_to_array(x.indkey::text, ' ')::int[]) k
                   JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k
                   JOIN pg_stats st ON st.schemaname = n.nspname AND st.tablename = tc.relname AND st.attname = a.attname) AS width
           FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_class tc ON tc.oid = x.indrelid
           JOIN pg_namespace n ON n.oid = ic.relnamespace JOIN pg_am am ON am.oid = ic.relam
          WHERE am.amname = 'btree' AND x.indisvalid AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
            AND NOT (0 = ANY (string_to_array(x.indkey::text, ' ')::int[]))),
       e AS (
         SELECT index, "table", bytes,
                (1 + ceil(tuples * (12 + ceil(width / 8.0) * 8) / ((current_setting('block_size')::int - 40) * 0.9))) * current_setting('block_size')::int AS expected_bytes
           FROM i WHERE width IS NOT NULL AND bytes >= $1),
       o AS (SELECT *, greatest(bytes - expected_bytes, 0) AS wasted FROM e WHERE bytes > 0 AND greatest(bytes - expected_bytes, 0)::float8 / bytes >= $2)
       SELECT index, "table", bytes::text, expected_bytes::text, count(*) OVER ()::text AS total
         FROM o ORDER BY wasted DESC, bytes DESC, 1 LIMIT $3`,
      [thresholds.bloatMinBytes, thresholds.bloatMinRatio, maxFindings],
    );
    const findings: Finding[] = [];
    for (const r of rows) {
      const bytes = Number(r.bytes);
      const expected = Number(r.expected_bytes);
      const wasted = Math.max(0, bytes - expected);
      const ratio = bytes > 0 ? wasted / bytes : 0;
      if (ratio < thresholds.bloatMinRatio) continue;
      findings.push({
        severity: ratio >= 0.7 ? 'warning' : 'info',
        object: `index ${r.index}`,
        message: `${r.index} on ${r.table}: about ${Math.round(ratio * 100)}% of its ${bytes} bytes is not needed by its entries (estimate).`,
        evidence: {
          index: r.index,
          table: r.table,
          bytes,
          expected_bytes: expected,
          wasted_bytes: wasted,
          bloat_ratio: round(ratio),
        },
        fixSql: `REINDEX INDEX CONCURRENTLY ${r.index}`,
        advice:
          'REINDEX CONCURRENTLY builds a fresh copy without blocking writes; it needs the space of a second copy while it runs.',
      });
    }
    return listed(findings, rows);
  },
};

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

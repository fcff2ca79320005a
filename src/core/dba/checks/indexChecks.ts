/** Index checks of `pg-agent health`: invalid indexes, indexes never scanned, duplicate and overlapping indexes. */
import { listed, type CheckContext, type Finding, type HealthCheck, type Listed } from '../healthTypes';

interface InvalidRow {
  total: string;
  index: string;
  table: string;
  bytes: string;
  definition: string;
}

export const invalidIndexes: HealthCheck = {
  id: 'invalid_indexes',
  title: 'Invalid indexes',
  thresholdKeys: [],
  async run({ read, maxFindings }: CheckContext): Promise<Listed> {
    const rows = await read<InvalidRow>(
      `SELECT format('%I.%I', n.nspname, i.relname) AS index, format('%I.%I', tn.nspname, t.relname) AS "table",
              pg_relation_size(i.oid)::text AS bytes, pg_get_indexdef(i.oid) AS definition, count(*) OVER ()::text AS total
         FROM pg_index x
         JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
         JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace
        WHERE NOT x.indisvalid AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        ORDER BY pg_relation_size(i.oid) DESC, 1 LIMIT $1`,
      [maxFindings],
    );
    return listed(
      rows.map((r): Finding => ({
        severity: 'warning',
        object: `index ${r.index}`,
        message: `${r.index} on ${r.table} is INVALID (a failed CREATE INDEX CONCURRENTLY or REINDEX): the planner never uses it, yet every write still maintains it.`,
        evidence: { index: r.index, table: r.table, bytes: Number(r.bytes), definition: r.definition },
        fixSql: `DROP INDEX CONCURRENTLY ${r.index}`,
        advice: `Drop it, then build it again if it is wanted: ${r.definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX CONCURRENTLY ')}`,
      })),
      rows,
    );
  },
};

interface UnusedRow {
  total: string;
  index: string;
  table: string;
  bytes: string;
  scans: string;
  table_scans: string | null;
  stats_since: string | null;
}

export const unusedIndexes: HealthCheck = {
  id: 'unused_indexes',
  title: 'Unused indexes',
  thresholdKeys: ['unusedIndexMinBytes'],
  async run({ read, thresholds, maxFindings }: CheckContext): Promise<Listed> {
    // Unique and primary-key indexes enforce something, and an index backing a constraint cannot be dropped alone.
    const rows = await read<UnusedRow>(
      `SELECT format('%I.%I', s.schemaname, s.indexrelname) AS index, format('%I.%I', s.schemaname, s.relname) AS "table",
              pg_relation_size(s.indexrelid)::text AS bytes, s.idx_scan::text AS scans,
              (t.seq_scan + coalesce(t.idx_scan, 0))::text AS table_scans,
              (SELECT stats_reset::text FROM pg_stat_database WHERE datname = current_database()) AS stats_since,
              count(*) OVER ()::text AS total
         FROM pg_stat_user_indexes s
         JOIN pg_index x ON x.indexrelid = s.indexrelid
         JOIN pg_stat_user_tables t ON t.relid = s.relid
        WHERE s.idx_scan = 0 AND NOT x.indisunique AND NOT x.indisprimary AND x.indisvalid
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = s.indexrelid)
          AND pg_relation_size(s.indexrelid) >= $1
        ORDER BY pg_relation_size(s.indexrelid) DESC, 1 LIMIT $2`,
      [thresholds.unusedIndexMinBytes, maxFindings],
    );
    return listed(
      rows.map((r): Finding => ({
        severity: 'info',
        object: `index ${r.index}`,
        message: `${r.index} on ${r.table} has never been scanned since statistics began${r.stats_since ? ` (${r.stats_since})` : ''}; it costs space and write time.`,
        evidence: {
          index: r.index,
          table: r.table,
          bytes: Number(r.bytes),
          idx_scan: Number(r.scans),
          table_scans: r.table_scans === null ? null : Number(r.table_scans),
          stats_since: r.stats_since,
        },
        fixSql: `DROP INDEX CONCURRENTLY ${r.index}`,
        advice: 'Statistics are per server: check replicas, and a month-end or yearly job, before dropping.',
      })),
      rows,
    );
  },
};

interface DuplicateRow {
  total: string;
  index: string;
  covered_by: string;
  table: string;
  exact: boolean;
  bytes: string;
  definition: string;
  other_definition: string;
}

export const duplicateIndexes: HealthCheck = {
  id: 'duplicate_indexes',
  title: 'Duplicate and overlapping indexes',
  thresholdKeys: [],
  async run({ read, maxFindings }: CheckContext): Promise<Listed> {
    // a is redundant when b has the same access method, a's key columns (and operator classes) as its leading
    // ones, the same predicate and expressions, and a enforces nothing b does not. Exact twins: keep the older oid.
    // One row per redundant index (the first covering one), the largest first.
    const rows = await read<DuplicateRow>(
      `WITH ix AS (
        SELECT x.indexrelid, x.indrelid, x.indisunique, x.indisprimary, i.relam,
               string_to_array(x.indkey::text, ' ') AS keys, string_to_array(x.indclass::text, ' ') AS classes,
               coalesce(pg_get_expr(x.indexprs, x.indrelid), '') AS exprs, coalesce(pg_get_expr(x.indpred, x.indrelid), '') AS pred,
               x.indnkeyatts
          FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
         WHERE x.indisvalid AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'),
      pairs AS (
        SELECT DISTINCT ON (a.indexrelid) a.indexrelid AS a, b.indexrelid AS b, a.indrelid AS t,
               (a.keys = b.keys AND a.classes = b.classes AND a.indnkeyatts = b.indnkeyatts) AS exact
          FROM ix a JOIN ix b ON a.indrelid = b.indrelid AND a.indexrelid <> b.indexrelid AND a.relam = b.relam
         WHERE a.exprs = b.exprs AND a.pred = b.pred
           AND a.indnkeyatts <= b.indnkeyatts
           AND a.keys = b.keys[1:cardinality(a.keys)] AND a.classes[1:a.indnkeyatts] = b.classes[1:a.indnkeyatts]
           AND NOT a.indisprimary
           AND (NOT a.indisunique OR (b.indisunique AND a.keys[1:a.indnkeyatts] = b.keys[1:b.indnkeyatts]))
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = a.indexrelid)
           AND (cardinality(a.keys) < cardinality(b.keys) OR a.indexrelid > b.indexrelid)
         ORDER BY a.indexrelid, b.indexrelid),
      worst AS (SELECT p.*, pg_relation_size(p.a) AS size, count(*) OVER () AS total FROM pairs p ORDER BY size DESC, p.a LIMIT $1)
      SELECT (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = w.a) AS index,
             (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = w.b) AS covered_by,
             (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = w.t) AS "table",
             w.exact, w.size::text AS bytes, pg_get_indexdef(w.a) AS definition, pg_get_indexdef(w.b) AS other_definition, w.total::text AS total
        FROM worst w ORDER BY w.size DESC, 3, 1`,
      [maxFindings],
    );
    const findings: Finding[] = [];
    for (const r of rows) {
      findings.push({
        severity: 'warning',
        object: `index ${r.index}`,
        message: r.exact
          ? `${r.index} duplicates ${r.covered_by} on ${r.table}: the same columns twice.`
          : `${r.index} on ${r.table} is covered by ${r.covered_by}, whose leading columns are the same.`,
        evidence: {
          index: r.index,
          covered_by: r.covered_by,
          table: r.table,
          exact: r.exact,
          bytes: Number(r.bytes),
          definition: r.definition,
          covering_definition: r.other_definition,
        },
        fixSql: `DROP INDEX CONCURRENTLY ${r.index}`,
        advice: r.exact
          ? 'Keep one of the two.'
          : `Queries that used ${r.index} can use ${r.covered_by}, which is larger: check the plans of your hottest queries after.`,
      });
    }
    return listed(findings, rows);
  },
};

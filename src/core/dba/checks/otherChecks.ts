/** Server-wide checks of `pg-agent health`: replication slots holding WAL, foreign keys without an index, cache hit ratios. */
import { listed, type CheckContext, type Finding, type HealthCheck, type Listed } from '../healthTypes';

interface SlotRow {
  slot_name: string;
  slot_type: string;
  active: boolean;
  retained: string | null;
  wal_status: string | null;
}

export const replicationSlots: HealthCheck = {
  id: 'replication_slots',
  title: 'Replication slots holding WAL',
  thresholdKeys: ['slotWarnBytes'],
  async run({ read, thresholds }: CheckContext): Promise<Finding[] | { skipped: string }> {
    const [recovery] = await read<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    if (recovery?.standby) return { skipped: 'this server is a standby: check the slots on the primary' };
    const rows = await read<SlotRow>(`
      SELECT slot_name, slot_type, active, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint::text AS retained, wal_status
        FROM pg_replication_slots ORDER BY 4 DESC NULLS LAST`);
    const findings: Finding[] = [];
    for (const r of rows) {
      const retained = r.retained === null ? 0 : Number(r.retained);
      if (r.active && retained < thresholds.slotWarnBytes) continue;
      if (!r.active && retained < thresholds.slotWarnBytes && r.wal_status !== 'lost') continue;
      findings.push({
        severity: r.wal_status === 'lost' || retained >= thresholds.slotWarnBytes * 10 ? 'critical' : 'warning',
        object: `slot ${r.slot_name}`,
        message: `Replication slot ${r.slot_name} (${r.slot_type}, ${r.active ? 'active' : 'inactive'}) holds ${retained} bytes of WAL on disk${r.wal_status === 'lost' ? ' and has already lost WAL its consumer needs' : ''}.`,
        evidence: {
          slot: r.slot_name,
          type: r.slot_type,
          active: r.active,
          retained_bytes: retained,
          wal_status: r.wal_status,
        },
        fixSql: `SELECT pg_drop_replication_slot(${quoteLiteral(r.slot_name)})`,
        advice:
          'Dropping a slot its consumer still needs breaks that replica or CDC pipeline; if it is alive, find why it lags instead.',
      });
    }
    return findings;
  },
};

interface FkRow {
  total: string;
  table: string;
  constraint_name: string;
  columns: string;
  references: string;
  rows: string;
  create_sql: string;
}

export const missingFkIndexes: HealthCheck = {
  id: 'missing_fk_indexes',
  title: 'Foreign keys without an index',
  thresholdKeys: ['fkMinTableRows'],
  async run({ read, thresholds, maxFindings }: CheckContext): Promise<Listed> {
    // An index serves the FK when the FK's columns are its leading key columns, in any order.
    const rows = await read<FkRow>(
      `SELECT format('%I.%I', n.nspname, t.relname) AS "table", c.conname AS constraint_name,
              (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, i)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS columns,
              format('%I.%I', rn.nspname, r.relname) AS "references", greatest(t.reltuples, 0)::bigint::text AS rows,
              format('CREATE INDEX CONCURRENTLY ON %I.%I (%s)', n.nspname, t.relname,
                (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, i)
                   JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum)) AS create_sql,
              count(*) OVER ()::text AS total
         FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
         JOIN pg_class r ON r.oid = c.confrelid JOIN pg_namespace rn ON rn.oid = r.relnamespace
        WHERE c.contype = 'f' AND t.relkind = 'r' AND greatest(t.reltuples, 0) >= $1
          AND NOT EXISTS (
            SELECT 1 FROM pg_index x
             WHERE x.indrelid = c.conrelid AND x.indisvalid AND x.indpred IS NULL
               AND (string_to_array(x.indkey::text, ' ')::int2[])[1:cardinality(c.conkey)] @> c.conkey
               AND (string_to_array(x.indkey::text, ' ')::int2[])[1:cardinality(c.conkey)] <@ c.conkey)
        ORDER BY greatest(t.reltuples, 0) DESC, 1, 2 LIMIT $2`,
      [thresholds.fkMinTableRows, maxFindings],
    );
    const findings = rows.map((r): Finding => ({
      severity: 'warning',
      object: r.table,
      message: `${r.table} (${r.columns}) references ${r.references} without an index: each DELETE or key UPDATE on ${r.references} scans ${r.table}, and joins on it cannot use an index.`,
      evidence: {
        table: r.table,
        constraint: r.constraint_name,
        columns: r.columns,
        references: r.references,
        table_rows: Number(r.rows),
      },
      fixSql: r.create_sql,
      advice:
        'CREATE INDEX CONCURRENTLY does not block writes; it cannot run inside a transaction and leaves an INVALID index if it fails.',
    }));
    return listed(findings, rows);
  },
};

interface CacheRow {
  total: string;
  scope: string;
  name: string;
  hit: string;
  read: string;
}

export const cacheHitRatios: HealthCheck = {
  id: 'cache_hit_ratio',
  title: 'Cache hit ratios',
  thresholdKeys: ['cacheHitMinRatio', 'cacheHitMinReads'],
  async run({ read, thresholds, maxFindings }: CheckContext): Promise<Listed> {
    // pg_statio_user_tables read once (not once for tables, once for indexes); below the ratio only, the database
    // first, then the lowest ratios.
    const rows = await read<CacheRow>(
      `WITH s AS MATERIALIZED (
         SELECT schemaname, relname, heap_blks_hit, heap_blks_read, idx_blks_hit, idx_blks_read FROM pg_statio_user_tables
          WHERE heap_blks_hit + heap_blks_read >= $1 OR coalesce(idx_blks_hit + idx_blks_read, 0) >= $1),
       r AS (
         SELECT 'database' AS scope, datname AS name, blks_hit AS hit, blks_read AS read FROM pg_stat_database WHERE datname = current_database()
         UNION ALL
         SELECT 'table', format('%I.%I', schemaname, relname), heap_blks_hit, heap_blks_read FROM s WHERE heap_blks_hit + heap_blks_read >= $1
         UNION ALL
         SELECT 'indexes of', format('%I.%I', schemaname, relname), idx_blks_hit, idx_blks_read FROM s WHERE coalesce(idx_blks_hit + idx_blks_read, 0) >= $1)
       SELECT scope, name, hit::text, read::text, count(*) OVER ()::text AS total FROM r
        WHERE hit + read >= $1 AND hit::float8 / nullif(hit + read, 0) < $2
        ORDER BY scope = 'database' DESC, hit::float8 / nullif(hit + read, 0), name LIMIT $3`,
      [thresholds.cacheHitMinReads, thresholds.cacheHitMinRatio, maxFindings],
    );
    const findings: Finding[] = [];
    for (const r of rows) {
      const hit = Number(r.hit);
      const reads = Number(r.read);
      if (hit + reads < thresholds.cacheHitMinReads) continue;
      const ratio = hit / (hit + reads);
      if (ratio >= thresholds.cacheHitMinRatio) continue;
      findings.push({
        severity: r.scope === 'database' && ratio < 0.9 ? 'warning' : 'info',
        object: r.scope === 'database' ? `database ${r.name}` : r.name,
        message: `${r.scope === 'indexes of' ? `Indexes of ${r.name}` : r.scope === 'database' ? `Database ${r.name}` : r.name}: ${Math.round(ratio * 1000) / 10}% of block reads found in shared buffers.`,
        evidence: {
          scope: r.scope,
          name: r.name,
          blocks_hit: hit,
          blocks_read: reads,
          hit_ratio: Math.round(ratio * 10000) / 10000,
        },
        advice:
          'Reads from the OS page cache count as misses here, so this is a lower bound. If the working set does not fit in memory: more shared_buffers or RAM, or fewer rows read (indexes, `pg-agent top`).',
      });
    }
    return listed(findings, rows);
  },
};

function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

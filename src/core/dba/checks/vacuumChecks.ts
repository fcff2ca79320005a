/** Maintenance checks of `pg-agent health`: tables never or long not vacuumed or analyzed, and transaction ID wraparound distance. */
import { listed, type CheckContext, type Finding, type HealthCheck, type Listed } from '../healthTypes';

interface StaleRow {
  total: string;
  table: string;
  rows: string;
  dead: string;
  modified: string;
  last_vacuum: string | null;
  last_analyze: string | null;
  vacuum_days: string | null;
  analyze_days: string | null;
}

export const staleMaintenance: HealthCheck = {
  id: 'vacuum_analyze',
  title: 'Tables never or long not vacuumed / analyzed',
  thresholdKeys: ['vacuumStaleDays', 'vacuumMinRows'],
  async run({ read, thresholds, maxFindings }: CheckContext): Promise<Listed> {
    const rows = await read<StaleRow>(
      `SELECT format('%I.%I', s.schemaname, s.relname) AS "table", (CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint ELSE n_live_tup END)::bigint::text AS rows, n_dead_tup::text AS dead,
              n_mod_since_analyze::text AS modified,
              greatest(last_vacuum, last_autovacuum)::text AS last_vacuum, greatest(last_analyze, last_autoanalyze)::text AS last_analyze,
              floor(extract(epoch FROM now() - greatest(last_vacuum, last_autovacuum)) / 86400)::text AS vacuum_days,
              floor(extract(epoch FROM now() - greatest(last_analyze, last_autoanalyze)) / 86400)::text AS analyze_days,
              count(*) OVER ()::text AS total
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE (CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint ELSE n_live_tup END) + n_dead_tup >= $1
          AND (greatest(last_vacuum, last_autovacuum) IS NULL OR greatest(last_analyze, last_autoanalyze) IS NULL
               OR greatest(last_vacuum, last_autovacuum) < now() - make_interval(days => $2)
               OR greatest(last_analyze, last_autoanalyze) < now() - make_interval(days => $2))
        ORDER BY (CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint ELSE s.n_live_tup END) DESC, 1 LIMIT $3`,
      [thresholds.vacuumMinRows, thresholds.vacuumStaleDays, maxFindings],
    );
    const findings = rows.map((r) => {
      const neverVacuumed = r.last_vacuum === null;
      const neverAnalyzed = r.last_analyze === null;
      const what = [
        neverVacuumed
          ? 'never vacuumed'
          : Number(r.vacuum_days) >= thresholds.vacuumStaleDays
            ? `not vacuumed for ${r.vacuum_days} days`
            : '',
        neverAnalyzed
          ? 'never analyzed'
          : Number(r.analyze_days) >= thresholds.vacuumStaleDays
            ? `not analyzed for ${r.analyze_days} days`
            : '',
      ].filter((s) => s !== '');
      return {
        severity: neverAnalyzed ? 'warning' : 'info',
        object: r.table,
        message: `${r.table} (${r.rows} rows) is ${what.join(' and ')}${neverAnalyzed ? ': the planner guesses its row counts' : ''}.`,
        evidence: {
          table: r.table,
          rows: Number(r.rows),
          dead_tuples: Number(r.dead),
          modified_since_analyze: Number(r.modified),
          last_vacuum: r.last_vacuum,
          last_analyze: r.last_analyze,
        },
        fixSql: `VACUUM (ANALYZE) ${r.table}`,
        advice:
          'If this keeps happening, check that autovacuum is on and its thresholds suit this table (ALTER TABLE … SET (autovacuum_…)).',
      } satisfies Finding;
    });
    return listed(findings, rows);
  },
};

interface WraparoundRow {
  database: string;
  age: string;
  oldest_table: string | null;
  oldest_table_age: string | null;
}

export const xidWraparound: HealthCheck = {
  id: 'xid_wraparound',
  title: 'Transaction ID wraparound distance',
  thresholdKeys: ['wraparoundWarnAge', 'wraparoundCriticalAge'],
  async run({ read, thresholds }: CheckContext): Promise<Finding[]> {
    const rows = await read<WraparoundRow>(
      `SELECT d.datname AS database, age(d.datfrozenxid)::text AS age,
              CASE WHEN d.datname = current_database() THEN (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.relkind IN ('r', 'm', 't') ORDER BY age(c.relfrozenxid) DESC LIMIT 1) END AS oldest_table,
              CASE WHEN d.datname = current_database() THEN (SELECT max(age(c.relfrozenxid)) FROM pg_class c WHERE c.relkind IN ('r', 'm', 't'))::text END AS oldest_table_age
         FROM pg_database d WHERE d.datallowconn AND age(d.datfrozenxid) >= $1 ORDER BY age(d.datfrozenxid) DESC`,
      [thresholds.wraparoundWarnAge],
    );
    const limit = 2 ** 31 - 1;
    return rows.map((r) => {
      const age = Number(r.age);
      return {
        severity: age >= thresholds.wraparoundCriticalAge ? 'critical' : 'warning',
        object: `database ${r.database}`,
        message: `Database ${r.database} is ${age} transactions old: ${limit - age} left before PostgreSQL stops accepting writes to prevent wraparound.`,
        evidence: {
          database: r.database,
          xid_age: age,
          remaining: limit - age,
          oldest_table: r.oldest_table,
          oldest_table_age: r.oldest_table_age === null ? null : Number(r.oldest_table_age),
        },
        ...(r.oldest_table ? { fixSql: `VACUUM (FREEZE, ANALYZE) ${r.oldest_table}` } : {}),
        advice:
          'Freeze the oldest tables first (VACUUM FREEZE, in the database concerned); look for long transactions and abandoned replication slots or prepared transactions holding the horizon back.',
      } satisfies Finding;
    });
  },
};

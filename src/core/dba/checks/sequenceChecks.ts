/**
 * Sequences near their maximum (`pg-agent health`): the limit is the sequence's own MAXVALUE or, lower, the
 * type of the column it feeds (a bigint sequence behind an integer column fails at 2^31 − 1 all the same).
 */
import type { CheckContext, Finding, HealthCheck, Listed } from '../healthTypes';

interface SequenceRow {
  /** Every sequence, those not readable, those at or over the warning ratio (one row says them all). */
  sequences: string;
  unreadable: string;
  total: string;
  /** Null when no sequence is at the warning ratio (the row then only holds the counts). */
  sequence: string | null;
  last_value: string | null;
  max_value: string;
  increment: string;
  column_ref: string | null;
  column_type: string | null;
  column_max: string | null;
  table_name: string | null;
  column_name: string | null;
}

export const sequencesNearMax: HealthCheck = {
  id: 'sequences_near_max',
  title: 'Sequences near their maximum',
  thresholdKeys: ['sequenceWarnRatio', 'sequenceCriticalRatio'],
  async run({ read, thresholds, maxFindings }: CheckContext): Promise<Listed | { skipped: string }> {
    // pg_sequences.last_value is NULL without USAGE or SELECT on the sequence (and before its first nextval).
    // The used share is computed here (as the text below does: truncated to 1/10000) so only offenders are read.
    const rows = await read<SequenceRow>(
      `WITH s AS (
         SELECT format('%I.%I', s.schemaname, s.sequencename) AS sequence, s.last_value, s.max_value, s.increment_by,
                CASE WHEN a.attname IS NOT NULL THEN format('%I.%I.%I', tn.nspname, t.relname, a.attname) END AS column_ref, format_type(a.atttypid, a.atttypmod) AS column_type,
                CASE a.atttypid WHEN 'int2'::regtype THEN 32767 WHEN 'int4'::regtype THEN 2147483647 WHEN 'int8'::regtype THEN 9223372036854775807 END AS column_max,
                CASE WHEN a.attname IS NOT NULL THEN format('%I.%I', tn.nspname, t.relname) END AS table_name, quote_ident(a.attname) AS column_name
           FROM pg_sequences s
           JOIN pg_namespace sn ON sn.nspname = s.schemaname
           JOIN pg_class sc ON sc.relname = s.sequencename AND sc.relnamespace = sn.oid
           LEFT JOIN pg_depend d ON d.objid = sc.oid AND d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
           LEFT JOIN pg_class t ON t.oid = d.refobjid LEFT JOIN pg_namespace tn ON tn.oid = t.relnamespace
           LEFT JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
          WHERE s.increment_by > 0),
       o AS (
         SELECT *, floor(last_value::numeric * 10000 / nullif(least(max_value::numeric, coalesce(column_max, max_value)::numeric), 0)) / 10000 AS used
           FROM s WHERE last_value IS NOT NULL),
       c AS (SELECT count(*) AS sequences, count(*) FILTER (WHERE last_value IS NULL) AS unreadable,
                    (SELECT count(*) FROM o WHERE used >= $1) AS total FROM s)
       SELECT c.sequences::text, c.unreadable::text, c.total::text, w.sequence, w.last_value::text, w.max_value::text,
              w.increment_by::text AS increment, w.column_ref, w.column_type, w.column_max::text, w.table_name, w.column_name
         FROM c LEFT JOIN LATERAL (SELECT * FROM o WHERE used >= $1 ORDER BY used DESC, sequence LIMIT $2) w ON true`,
      [thresholds.sequenceWarnRatio, maxFindings],
    );
    const findings: Finding[] = [];
    for (const r of rows) {
      if (r.sequence === null || r.last_value === null) continue;
      const last = BigInt(r.last_value);
      const seqMax = BigInt(r.max_value);
      const colMax = r.column_max === null ? seqMax : BigInt(r.column_max);
      const limit = colMax < seqMax ? colMax : seqMax;
      const ratio = Number((last * 10000n) / limit) / 10000;
      if (ratio < thresholds.sequenceWarnRatio) continue;
      const byColumn = colMax < seqMax;
      const widenColumn = r.table_name !== null && r.column_type !== null && r.column_type !== 'bigint';
      findings.push({
        severity: ratio >= thresholds.sequenceCriticalRatio ? 'critical' : 'warning',
        object: `sequence ${r.sequence}`,
        message: `${r.sequence} has used ${Math.round(ratio * 1000) / 10}% of its range (${last} of ${limit}${byColumn ? `, the limit of ${r.column_ref} (${r.column_type})` : ''}); inserts fail when it runs out.`,
        evidence: {
          sequence: r.sequence,
          last_value: r.last_value,
          max_value: r.max_value,
          limit: limit.toString(),
          used_ratio: ratio,
          column: r.column_ref,
          column_type: r.column_type,
        },
        fixSql: widenColumn
          ? `ALTER TABLE ${r.table_name} ALTER COLUMN ${r.column_name} TYPE bigint`
          : `ALTER SEQUENCE ${r.sequence} AS bigint MAXVALUE 9223372036854775807`,
        advice: widenColumn
          ? 'Changing the column type rewrites the table under an ACCESS EXCLUSIVE lock (and columns that reference it need the same change): on a big table, plan it (a new bigint column filled in batches, then swapped).'
          : 'Raising MAXVALUE is instant; columns that store the values must be wide enough too.',
      });
    }
    const counts = rows[0];
    const unreadable = Number(counts?.unreadable ?? 0);
    if (findings.length === 0 && unreadable > 0 && unreadable === Number(counts?.sequences ?? 0)) {
      return {
        skipped: `none of the ${unreadable} sequences could be read (no USAGE or SELECT privilege on them, or never used)`,
      };
    }
    const total = Number(counts?.total ?? 0);
    return { findings, ...(total > findings.length ? { more: total - findings.length } : {}) };
  },
};

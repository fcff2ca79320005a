/**
 * The tables a statement locks, resolved in the catalog (an index to its table), with their size: the
 * planner's row estimate (pg_class.reltuples, never a count(*) that would read a big table) and bytes on
 * disk, and the relfilenode that tells afterwards whether a preview rewrote the storage.
 */
import type { DbSession } from '../../db/db';
import { describeSize } from '../../../shared/lockPhrases';
import { quoteQualified } from '../tableEffects';

export interface TableFacts {
  oid: number;
  /** "schema.name" of the table (for an index: of its table). */
  table: string;
  /** Planner's estimate; null when the table was never analysed or vacuumed (reltuples = -1). */
  rows: number | null;
  bytes: number;
  relfilenode: number;
  /** 'r' table, 'p' partitioned, 'm' materialized view, 'v' view, 'f' foreign… (pg_class.relkind). */
  relkind: string;
}

/** Facts of a relation named as written; undefined when it does not exist (yet). */
export async function tableFacts(
  session: DbSession,
  relation: string,
  target: 'table' | 'index',
): Promise<TableFacts | undefined> {
  const result = await session.query<{
    oid: number;
    schema: string;
    name: string;
    rows: number;
    bytes: number;
    relfilenode: number;
    relkind: string;
  }>(
    `SELECT c.oid::int8::float8 AS oid, n.nspname AS schema, c.relname AS name, c.reltuples::float8 AS rows,
            pg_total_relation_size(c.oid)::float8 AS bytes, pg_relation_filenode(c.oid)::int8::float8 AS relfilenode,
            c.relkind::text AS relkind
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = CASE WHEN $2 = 'index' THEN (SELECT indrelid FROM pg_index WHERE indexrelid = to_regclass($1))
                        ELSE to_regclass($1)::oid END`,
    [quoteQualified(relation), target],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return {
    oid: row.oid,
    table: `${row.schema}.${row.name}`,
    rows: row.rows < 0 ? null : Math.round(row.rows),
    bytes: row.bytes,
    relfilenode: row.relfilenode ?? 0,
    relkind: row.relkind,
  };
}

/** The current relfilenode of each table (what a rewrite changes), by oid. */
export async function relfilenodes(session: DbSession, oids: readonly number[]): Promise<Map<number, number>> {
  if (oids.length === 0) return new Map();
  const result = await session.query<{ oid: number; node: number }>(
    `SELECT oid::int8::float8 AS oid, pg_relation_filenode(oid)::int8::float8 AS node FROM pg_class WHERE oid = ANY($1::oid[])`,
    [oids],
  );
  return new Map(result.rows.map((r) => [r.oid, r.node]));
}

export type SizeClass = 'small' | 'medium' | 'big';

export interface SizeThresholds {
  /** Up to this many rows (and 8 KB pages' worth of bytes) a table is small: strong locks on it are brief. */
  smallTableRows: number;
  /** From this many rows a table is big: a write-blocking lock held for a scan of it is at least HIGH. */
  bigTableRows: number;
}

/** Bytes per row assumed when the planner has no row estimate (never analysed): a typical narrow row. */
const BYTES_PER_ROW = 100;

export function sizeClass(facts: Pick<TableFacts, 'rows' | 'bytes'>, thresholds: SizeThresholds): SizeClass {
  // The planner's row count when it has one (decision: a bloated table counts by its live rows); the bytes
  // on disk, indexes included, only when the table was never analysed.
  const effective = facts.rows ?? Math.round(facts.bytes / BYTES_PER_ROW);
  if (effective <= thresholds.smallTableRows) return 'small';
  if (effective >= thresholds.bigTableRows) return 'big';
  return 'medium';
}

/** "2.1M rows, 180 MB" */
export function describeTableSize(facts: Pick<TableFacts, 'rows' | 'bytes'>): string {
  return describeSize(facts.rows, facts.bytes);
}
